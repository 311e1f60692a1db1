// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import java.lang.instrument.Instrumentation;

/**
 * Java agent entry for JVMs that forbid self-attach: {@code -javaagent:/path/to/kpipe-plugin.jar}
 * in {@code KAFKA_OPTS}. The agent only keeps the {@link Instrumentation}; {@link KpipePlugin}
 * (still named in {@code metric.reporters}) reads the {@code kpipe.*} settings and installs the
 * hooks with it.
 */
public final class KpipeAgent {
    private static volatile Instrumentation instrumentation;

    private KpipeAgent() {}

    /**
     * Called by the JVM before {@code main}.
     *
     * @param args ignored
     * @param inst the instrumentation
     */
    public static void premain(String args, Instrumentation inst) {
        instrumentation = inst;
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
