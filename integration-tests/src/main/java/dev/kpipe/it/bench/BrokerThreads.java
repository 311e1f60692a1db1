// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a request costs a broker's threads beyond its own code, counted the same way on stock and on kpipe (issue #35):
 * per role — the client listener's network processors ({@code data-plane-kafka-network-thread-*}, not the
 * {@code CONTROLLER} listener's) and
 * the request handlers ({@code data-plane-kafka-request-handler-*}), G1's threads — the voluntary context switches of its threads
 * (Linux {@code /proc/<pid>/task/<tid>/status}: each is a time the thread blocked and was woken again: a processor in
 * its selector poll, woken by I/O or a {@code Selector.wakeup}; a handler on the request queue, handed a request) and
 * their CPU time ({@code utime + stime}, 10 ms ticks). The threads are found once by name, from {@code jcmd
 * Thread.print}'s native ids. Linux only; a figure that cannot be read is NaN. Caller's thread.
 */
final class BrokerThreads {
    private static final double TICK_SECONDS = 0.01; // USER_HZ = 100
    private static final Pattern THREAD = Pattern.compile("^\"([^\"]+)\".*\\bnid=(0x[0-9a-fA-F]+|\\d+)");

    /** The thread roles counted. */
    enum Role {
        NETWORK("network"),
        HANDLER("handler"),
        /** G1's threads: the collector's share, which once set a gap (docs/benchmark.md, S2F). */
        GC("gc");

        final String label;

        Role(String label) {
            this.label = label;
        }

        /** @return the role of a thread of this name, or null if it is not counted */
        static Role of(String threadName) {
            // data-plane-kafka-network-thread-<node>-<listener>-<protocol>-<n>; the listener as ListenerName(X) to 4.3
            if (threadName.contains("kafka-network-thread") && !threadName.contains("CONTROLLER")) {
                return NETWORK;
            }
            if (threadName.startsWith("data-plane-kafka-request-handler")) {
                return HANDLER;
            }
            return threadName.startsWith("GC Thread#") || threadName.startsWith("G1 ") ? GC : null;
        }
    }

    /** One reading, per role: voluntary context switches and CPU seconds summed over its threads. */
    record Reading(Map<Role, Long> switches, Map<Role, Double> cpuSeconds) {}

    private final long pid;
    private final Map<Role, List<Long>> tids;

    private BrokerThreads(long pid, Map<Role, List<Long>> tids) {
        this.pid = pid;
        this.tids = tids;
    }

    /**
     * Finds the broker's counted threads (runs {@code jcmd <pid> Thread.print}, about a second; call before a window).
     *
     * @param pid the broker JVM
     * @return its threads by role; none where jcmd fails
     */
    static BrokerThreads of(long pid) {
        Map<Role, List<Long>> tids = new EnumMap<>(Role.class);
        for (Role r : Role.values()) {
            tids.put(r, new ArrayList<>());
        }
        try {
            Process p = new ProcessBuilder(jcmd(pid).toString(), Long.toString(pid), "Thread.print")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            parse(out, tids);
        } catch (IOException e) {
            // figures stay NaN
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new BrokerThreads(pid, tids);
    }

    /** Adds the native thread id of every counted thread of a {@code Thread.print} output to {@code tids}. */
    static void parse(String threadPrint, Map<Role, List<Long>> tids) {
        for (String line : threadPrint.split("\n")) {
            Matcher m = THREAD.matcher(line);
            if (m.find()) {
                Role role = Role.of(m.group(1));
                if (role != null) {
                    String nid = m.group(2);
                    tids.get(role)
                            .add(nid.startsWith("0x") ? Long.parseLong(nid.substring(2), 16) : Long.parseLong(nid));
                }
            }
        }
    }

    private static Path jcmd(long pid) {
        return ProcessHandle.of(pid)
                .flatMap(h -> h.info().command())
                .map(c -> Path.of(c).resolveSibling("jcmd"))
                .filter(Files::isExecutable)
                .orElse(Path.of(System.getProperty("java.home"), "bin", "jcmd"));
    }

    /** @return the counters now */
    Reading read() {
        Map<Role, Long> switches = new EnumMap<>(Role.class);
        Map<Role, Double> cpu = new EnumMap<>(Role.class);
        for (Map.Entry<Role, List<Long>> e : tids.entrySet()) {
            long s = 0;
            double c = 0;
            boolean all = !e.getValue().isEmpty();
            for (long tid : e.getValue()) {
                Path task = Path.of("/proc", Long.toString(pid), "task", Long.toString(tid));
                try {
                    s += voluntarySwitches(Files.readString(task.resolve("status")));
                    c += cpuTicks(Files.readString(task.resolve("stat"))) * TICK_SECONDS;
                } catch (IOException | RuntimeException ex) {
                    all = false;
                }
            }
            switches.put(e.getKey(), all ? s : -1);
            cpu.put(e.getKey(), all ? c : Double.NaN);
        }
        return new Reading(switches, cpu);
    }

    /** @return {@code voluntary_ctxt_switches} of a {@code /proc/.../status} text */
    static long voluntarySwitches(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new IllegalArgumentException("no voluntary_ctxt_switches");
    }

    /** @return utime + stime, in ticks, of a {@code /proc/.../stat} line (fields 14 and 15; the name may hold spaces) */
    static long cpuTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // field 3 is f[0]
    }

    /**
     * @param a the reading at the window's start
     * @param b at its end
     * @param requests produce requests the broker received in the window
     * @return per role, wake-ups (voluntary switches) and CPU microseconds per produce request, and its thread count
     */
    Map<String, Double> perRequest(Reading a, Reading b, double requests) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (Role r : Role.values()) {
            long s0 = a.switches().get(r);
            long s1 = b.switches().get(r);
            boolean ok = s0 >= 0 && s1 >= 0 && requests > 0;
            m.put("leader_" + r.label + "_wakeups_per_produce_request", ok ? (s1 - s0) / requests : Double.NaN);
            m.put(
                    "leader_" + r.label + "_cpu_us_per_produce_request",
                    ok ? (b.cpuSeconds().get(r) - a.cpuSeconds().get(r)) * 1e6 / requests : Double.NaN);
            m.put("leader_" + r.label + "_threads", (double) tids.get(r).size());
        }
        return m;
    }
}
