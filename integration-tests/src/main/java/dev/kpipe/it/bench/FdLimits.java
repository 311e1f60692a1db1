// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import com.sun.management.UnixOperatingSystemMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The open-file limits S10 needs: this JVM's (which holds the connections) and the broker's (which accepts them; the
 * harness starts brokers as child processes, so they inherit this JVM's limit: the JVM raises its soft limit to the
 * hard one at start on Linux, and {@code demo.sh} raises the shell's). Linux; elsewhere the broker's figures are NaN.
 * Stateless.
 */
final class FdLimits {
    private FdLimits() {}

    /**
     * Prints both limits to stderr and checks them.
     *
     * @param brokerPid the broker's process id
     * @param needed file descriptors each process needs
     * @return the figures: {@code fd_limit_bench_jvm}, {@code fd_limit_broker}, {@code broker_open_fds_before}
     * @throws IOException if a known limit is below {@code needed} (the message says how to raise it)
     */
    static Map<String, Object> check(long brokerPid, int needed) throws IOException {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        double bench = os instanceof UnixOperatingSystemMXBean u ? u.getMaxFileDescriptorCount() : Double.NaN;
        double broker = brokerLimit(brokerPid);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("fd_limit_bench_jvm", bench);
        m.put("fd_limit_broker", broker);
        m.put("broker_open_fds_before", (double) openFds(brokerPid));
        System.err.printf(
                Locale.ROOT,
                "%nbench: open files limit: bench JVM %.0f, broker (pid %d) %.0f; needed about %d each%n",
                bench,
                brokerPid,
                broker,
                needed);
        if (bench < needed || broker < needed) {
            throw new IOException("the open files limit (bench JVM " + (long) bench + ", broker " + (long) broker
                    + ") is below the " + needed + " S10 needs: raise it (ulimit -n " + needed
                    + " before demo.sh, or the hard limit in /etc/security/limits.conf) or lower --s10-connections");
        }
        return m;
    }

    /** @return the process's soft open-files limit from {@code /proc/<pid>/limits}, NaN if not known */
    static double brokerLimit(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "limits"))) {
                if (line.startsWith("Max open files")) {
                    String soft =
                            line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? Double.POSITIVE_INFINITY : Double.parseDouble(soft);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or the process is gone
        }
        return Double.NaN;
    }

    /** @return the process's open file descriptors now, -1 if not known */
    static long openFds(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return fds.count();
        } catch (IOException | UncheckedIOException e) {
            return -1;
        }
    }
}
