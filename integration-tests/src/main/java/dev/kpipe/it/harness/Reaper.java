// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Last line of defence: one JVM shutdown hook that closes every cluster still open, so no broker JVM outlives the
 * test or CLI JVM (Ctrl-C, failsafe timeout, {@code System.exit}). Thread-safe.
 */
final class Reaper {
    private static final Set<Cluster> OPEN = new LinkedHashSet<>();
    private static boolean hookInstalled;
    /** Where the lines about stopping go: stderr, or what {@link #reportTo} names. */
    private static volatile PrintStream report = System.err;

    private Reaper() {}

    static synchronized void register(Cluster cluster) {
        if (!hookInstalled) {
            Runtime.getRuntime().addShutdownHook(new Thread(Reaper::closeAll, "kpipe-it-reaper"));
            hookInstalled = true;
            killOrphans(cluster.settings().workDir());
        }
        OPEN.add(cluster);
    }

    /**
     * Kills broker JVMs left behind by a harness JVM that died without running its shutdown hook (kill -9): processes
     * marked {@code -Dkpipe.it.node=}, logging under {@code workDir}, whose parent is gone (re-parented to PID 1).
     */
    private static void killOrphans(Path workDir) {
        String logsDirPrefix = "-Dkafka.logs.dir=" + workDir + "/";
        ProcessHandle.allProcesses()
                .filter(p -> p.parent().map(pp -> pp.pid() == 1).orElse(true))
                .filter(p -> p.info()
                        .arguments()
                        .map(args -> Arrays.stream(args).anyMatch(a -> a.startsWith("-Dkpipe.it.node="))
                                && Arrays.stream(args).anyMatch(a -> a.startsWith(logsDirPrefix)))
                        .orElse(false))
                .forEach(p -> {
                    System.err.println("kpipe-it: killing orphaned broker JVM " + p.pid() + " from an earlier run");
                    p.destroyForcibly();
                });
    }

    /**
     * @param out where the lines about stopping go from now on (the cluster CLI: the terminal, which outlives a Maven
     *     stopped by the same Ctrl-C)
     */
    static void reportTo(PrintStream out) {
        report = out;
    }

    static synchronized void unregister(Cluster cluster) {
        OPEN.remove(cluster);
    }

    private static void closeAll() {
        List<Cluster> open;
        synchronized (Reaper.class) {
            open = new ArrayList<>(OPEN);
        }
        for (Cluster c : open) {
            PrintStream out = report;
            try {
                out.println("kpipe-it: stopping " + c + " at JVM exit");
                c.shutdownForExit();
                List<String> left = c.nodes().stream()
                        .filter(KafkaNode::isRunning)
                        .map(n -> "node " + n.id() + " (pid " + n.pid() + ")")
                        .toList();
                out.println(
                        left.isEmpty()
                                ? "kpipe-it: " + c + " stopped; no broker of it is left running"
                                : "kpipe-it: " + c + " stopped, but still running: " + String.join(", ", left));
            } catch (RuntimeException e) {
                out.println("kpipe-it: closing " + c + " at JVM exit failed: " + e);
            }
            out.flush();
        }
    }
}
