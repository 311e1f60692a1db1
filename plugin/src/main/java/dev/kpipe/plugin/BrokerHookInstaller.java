// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.ObservedListener;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.spi.NetworkEventListener;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Installs one broker's hooks (the {@link HookInstaller} of a real broker): the JVM's advice, if it has
 * none yet, with the instrumentation from {@code -javaagent}, else by self-attach ({@link AgentInstall}; where the JVM
 * warned about the attach, JEP 451, one WARN saying what to add); then the broker's {@link BrokerHooks}, pointed at the
 * coordinator with its observers beside it ({@link ObservedListener}; through the check of {@link BrokerEventCheck}
 * when one is named). Thread: the caller of {@link
 * KpipeRuntime#start} or {@link KpipeRuntime#reconfigure}; {@link #hooks()} any.
 */
final class BrokerHookInstaller implements HookInstaller {

    private static final Logger LOG = LoggerFactory.getLogger(BrokerHookInstaller.class);

    private final String nodeId;
    /** The broker calls the SPI itself: no advice, and the broker reports {@code onInstalled}. */
    private final boolean brokerCallsSpi;
    /** This broker's hooks, once installed. */
    private volatile BrokerHooks hooks;
    /** The listener this broker's events go to, once installed. */
    private volatile NetworkEventListener<Object, Object> events;

    /**
     * @param nodeId the broker's node id, in the hooks' name
     * @param brokerCallsSpi whether the broker calls the SPI itself ({@link KpipeNetworkListener}): no advice
     */
    BrokerHookInstaller(String nodeId, boolean brokerCallsSpi) {
        this.nodeId = nodeId;
        this.brokerCallsSpi = brokerCallsSpi;
    }

    /** @return the listener this broker's events go to, or {@code null} before {@link #install}; thread: any */
    NetworkEventListener<Object, Object> events() {
        return events;
    }

    /** @return this broker's hooks, or {@code null} before {@link #install}; thread: any */
    BrokerHooks hooks() {
        return hooks;
    }

    @Override
    public String install(
            KpipeConfig config,
            PipelineCoordinator<Object, Object> pipeline,
            List<NetworkEventListener<Object, Object>> observers,
            HookCounters counters)
            throws UnsupportedBrokerException {
        Set<String> listeners = new TreeSet<>(config.pipelinedListeners());
        NetworkEventListener<Object, Object> events = BrokerEventCheck.wrap(
                ObservedListener.of(pipeline, observers, counters), System.getProperty(BrokerEventCheck.PROPERTY));
        if (brokerCallsSpi) { // the broker reports onInstalled itself, once it has created its listener
            hooks = new BrokerHooks("node " + nodeId, listeners, counters);
            this.events = events;
            return "no advice: the broker calls the SPI (" + KpipeNetworkListener.BROKER_SETTING + "), listeners="
                    + listeners + (observers.isEmpty() ? "" : ", observers=" + observers.size());
        }
        String[] mode = new String[1];
        Interceptor.Installation installation = installAdvice(mode);
        try {
            events.onInstalled(installation.capabilities());
        } catch (RuntimeException e) {
            counters.fault();
        }
        BrokerHooks h = new BrokerHooks("node " + nodeId, listeners, counters);
        h.listener(events);
        this.events = events;
        hooks = h;
        Interceptor.brokersChanged();
        return "install mode " + mode[0] + ", listeners=" + listeners
                + (observers.isEmpty() ? "" : ", observers=" + observers.size());
    }

    /**
     * The JVM's advice: installed by the first broker that needs it (the instrumentation from {@code -javaagent}, else
     * by self-attach, once), shared by the others. Thread: any; serialised across the brokers of the JVM.
     *
     * @param mode set to how the advice came: {@code javaagent}, {@code attach}, or {@code shared}
     */
    private static synchronized Interceptor.Installation installAdvice(String[] mode)
            throws UnsupportedBrokerException {
        Interceptor.Installation installation = Interceptor.installation();
        if (installation != null) {
            mode[0] = "shared (the JVM's advice, installed before)";
            return installation;
        }
        AgentInstall.Agent agent = AgentInstall.obtain();
        installation = Interceptor.install(agent.instrumentation(), BrokerHookInstaller.class.getClassLoader());
        agent.advice().ifPresent(LOG::warn);
        mode[0] = agent.mode();
        return installation;
    }
}
