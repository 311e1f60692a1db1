// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

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

    static synchronized void unregister(Cluster cluster) {
        OPEN.remove(cluster);
    }

    private static void closeAll() {
        List<Cluster> open;
        synchronized (Reaper.class) {
            open = new ArrayList<>(OPEN);
        }
        for (Cluster c : open) {
            try {
                System.err.println("kpipe-it: stopping " + c + " at JVM exit");
                c.shutdownForExit();
            } catch (RuntimeException e) {
                System.err.println("kpipe-it: closing " + c + " at JVM exit failed: " + e);
            }
        }
    }
}
