// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import dev.kpipe.spi.NetworkEventListener;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One broker's side of the installed advice: the listener its network processors and request handlers report to, and
 * which of its listeners (by name) are pipelined. The advice is installed once per JVM; each broker of the JVM has its
 * own {@code BrokerHooks}, so brokers that share a JVM (Kafka's own test harness, {@code KafkaClusterTestKit}, Spring's
 * {@code EmbeddedKafka}) never share settings, budget or metrics.
 *
 * <p>How the advice finds a broker's hooks: every hooked broker object it sees ({@code kafka.network.Processor}, {@code
 * kafka.server.KafkaApis}) holds its broker's {@code org.apache.kafka.common.metrics.Metrics}, and the broker adds its
 * {@code metric.reporters} to that registry; the reporter that is an {@link Owner} (kpipe's) hands out the hooks. So a
 * broker's hooks live as long as its reporter: created when the broker configures it, stopped when the broker closes
 * its metrics. Where no reporter is an owner, the JVM-wide default ({@link Interceptor#attachEveryBroker}) may attach
 * one.
 *
 * <p>Thread-safety: the listener is published through a volatile field; the pipelined listener names and the
 * counters ({@link HookCounters}, thread-safe) are fixed at construction.
 */
public final class BrokerHooks {

    /**
     * What a broker's metrics reporter implements so that the advice finds its broker's hooks. The newest owner in a
     * broker's registry counts (the last added); one that gives no hooks keeps its broker classic.
     */
    public interface Owner {
        /**
         * @return the broker's hooks, or {@code null} while this reporter does not pipeline its broker (kpipe off at
         *     start, or a broker kpipe could not hook); thread: any
         */
        BrokerHooks brokerHooks();

        /**
         * A newer owner was added to the same registry and takes over: this one stops. Thread: a network or request
         * handler thread; must not throw.
         */
        default void superseded() {}
    }

    private final String broker;
    private final Set<String> pipelinedListeners;
    private final HookCounters counters;
    private final AtomicBoolean servicesPublished = new AtomicBoolean();
    private volatile NetworkEventListener<Object, Object> listener;

    /**
     * @param broker the broker, for log lines, e.g. {@code node 1}
     * @param pipelinedListeners the broker listeners (names) whose connections the plugin sees; never the controller's
     * @param counters where this broker's hooks count the throwables they catch and the receives they drop
     */
    public BrokerHooks(String broker, Set<String> pipelinedListeners, HookCounters counters) {
        this.broker = broker;
        this.pipelinedListeners = Set.copyOf(pipelinedListeners);
        this.counters = Objects.requireNonNull(counters, "counters");
    }

    /**
     * Points this broker's advice at a listener, or stops it. Thread: any; the network and handler threads see the
     * change at their next hook.
     *
     * @param l the plugin, or {@code null}: the broker's advice does nothing from now on (kpipe off, or the broker's
     *     reporter closed)
     */
    public void listener(NetworkEventListener<Object, Object> l) {
        listener = l;
        Interceptor.brokersChanged();
    }

    /** @return the listener, or {@code null} while the broker's kpipe is not running; thread: any */
    public NetworkEventListener<Object, Object> listener() {
        return listener;
    }

    /** @return this broker's hook counters; thread: any */
    public HookCounters counters() {
        return counters;
    }

    /**
     * @param listenerName a broker listener's name, e.g. {@code PLAINTEXT}
     * @return whether its connections are pipelined
     */
    public boolean pipelines(String listenerName) {
        return pipelinedListeners.contains(listenerName);
    }

    /**
     * @return true the first time only: the caller (the advice) publishes the broker's services to the listener;
     *     thread: any
     */
    public boolean claimServices() {
        return !servicesPublished.get() && servicesPublished.compareAndSet(false, true);
    }

    @Override
    public String toString() {
        return "BrokerHooks[" + broker + ", listeners=" + pipelinedListeners + "]";
    }
}
