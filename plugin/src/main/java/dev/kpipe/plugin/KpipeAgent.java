// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import java.lang.instrument.Instrumentation;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Java agent entry: {@code -javaagent:/path/to/kpipe-plugin.jar} in {@code KAFKA_OPTS}, for JVMs that forbid
 * self-attach or warn about it (JEP 451). Without arguments the agent only keeps the {@link Instrumentation}; each
 * broker's {@link KpipePlugin} (named in {@code metric.reporters}) reads its {@code kpipe.*} settings and installs the
 * hooks with it. With JVM-wide settings ({@code -javaagent:/path/to/kpipe-plugin.jar=kpipe.enable=true,...}, or
 * {@code -Dkpipe.enable=true}: {@link JvmSettings}) that enable kpipe, it installs the advice at once and every broker
 * of the JVM runs its own kpipe ({@link #startEveryBroker}).
 */
public final class KpipeAgent {
    private static final Logger LOG = LoggerFactory.getLogger(KpipeAgent.class);
    private static volatile Instrumentation instrumentation;

    private KpipeAgent() {}

    /**
     * Called by the JVM before {@code main}.
     *
     * @param args JVM-wide {@code kpipe.*} settings, comma-separated {@code key=value} pairs, or {@code null}
     * @param inst the instrumentation
     * @throws IllegalArgumentException if an argument is not {@code key=value} (the JVM does not start; the message
     *     names it)
     */
    public static void premain(String args, Instrumentation inst) {
        instrumentation = inst;
        JvmSettings.agentArguments(args);
        startEveryBroker(inst);
    }

    /**
     * Called by the JVM when the agent is attached to a running JVM.
     *
     * @param args ignored
     * @param inst the instrumentation
     */
    public static void agentmain(String args, Instrumentation inst) {
        instrumentation = inst;
    }

    /**
     * Gives every broker of this JVM its own kpipe when the JVM-wide defaults say {@code kpipe.enable=true}
     * ({@link JvmSettings}): installs the advice now, and has it attach a kpipe to each broker whose {@code
     * metric.reporters} does not name one ({@link KpipePlugin#attach}). Logs one INFO line, or one ERROR line if this
     * JVM's Kafka cannot be hooked (its brokers then run without pipelining). Thread: the agent's start ({@code
     * premain}).
     *
     * @param inst the agent's instrumentation
     */
    static void startEveryBroker(Instrumentation inst) {
        Map<String, String> defaults = JvmSettings.defaults();
        if (!JvmSettings.everyBroker(defaults)) {
            return;
        }
        try {
            new KpipeConfig(defaults); // a bad value is named now, once, not at every broker
            Interceptor.Installation installation = Interceptor.install(inst, KpipeAgent.class.getClassLoader());
            Interceptor.attachEveryBroker(KpipePlugin::attach);
            LOG.info(
                    "kpipe {} installed for every broker of this JVM: Kafka {}, JVM-wide settings {}",
                    KpipeVersion.get(),
                    installation.capabilities().kafkaVersion(),
                    defaults);
        } catch (UnsupportedBrokerException e) {
            LOG.error("{}; the brokers of this JVM run without pipelining", e.getMessage());
        } catch (ConfigException e) {
            LOG.error("kpipe: {}; the brokers of this JVM run without pipelining", e.getMessage());
        } catch (RuntimeException | LinkageError e) { // never keep the JVM from starting
            LOG.error("kpipe failed to install for every broker of this JVM; they run without pipelining", e);
        }
    }

    /** @return the instrumentation given to the agent, or {@code null} if it was not started as one */
    static Instrumentation instrumentation() {
        return instrumentation;
    }
}
