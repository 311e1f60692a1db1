// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import java.lang.instrument.Instrumentation;

/**
 * Java agent entry: {@code -javaagent:/path/to/kpipe-plugin.jar} in {@code KAFKA_OPTS}, for JVMs that forbid
 * self-attach or warn about it (JEP 451). Without arguments the agent only keeps the {@link Instrumentation}; each
 * broker's {@link KpipePlugin} (named in {@code metric.reporters}) reads its {@code kpipe.*} settings and installs the
 * hooks with it. With JVM-wide settings ({@code -javaagent:/path/to/kpipe-plugin.jar=kpipe.enable=true,...}, or
 * {@code -Dkpipe.enable=true}: {@link JvmSettings}) that enable kpipe, it installs the advice at once and every broker
 * of the JVM runs its own kpipe ({@link KpipePlugin#startEveryBroker}).
 */
public final class KpipeAgent {
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
        KpipePlugin.startEveryBroker(inst);
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

    /** @return the instrumentation given to the agent, or {@code null} if it was not started as one */
    static Instrumentation instrumentation() {
        return instrumentation;
    }
}
