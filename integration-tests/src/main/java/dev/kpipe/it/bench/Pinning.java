// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.HarnessSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code --broker-cpus} and {@code --client-cpus}: broker JVMs started through {@code taskset -c} (the harness's
 * {@code kpipe.it.broker.cpus}, {@link HarnessSettings#brokerCpus()}), and this JVM pinned with {@code taskset -a -p
 * -c} on its own pid, so that its client threads and the client processes it starts ({@link ClientProcess}; a child
 * inherits its parent's affinity) run on the client CPUs. Main thread, once, before any cluster starts.
 */
final class Pinning {
    private static final Path ONLINE = Path.of("/sys/devices/system/cpu/online");

    private Pinning() {}

    /**
     * Checks the lists against the CPUs that exist and that {@code taskset} runs, then pins this JVM and sets the
     * harness property. With {@code --client-cpus} alone the brokers get this JVM's affinity from before the pinning
     * (they would otherwise inherit the client CPUs).
     *
     * @param o the side options
     * @return what was pinned, for the JSON and the header ({@code broker_cpus}, {@code client_cpus}, {@code
     *     bench_jvm_affinity_before}); empty if nothing was asked
     * @throws IllegalArgumentException naming the flag, if {@code taskset} is missing or fails, or a CPU does not exist
     * @throws IOException if {@code /sys/devices/system/cpu/online} cannot be read
     * @throws InterruptedException if interrupted while taskset runs
     */
    static Map<String, Object> apply(SideOptions o) throws IOException, InterruptedException {
        Map<String, Object> m = new LinkedHashMap<>();
        if (o.brokerCpus() == null && o.clientCpus() == null) {
            return m;
        }
        check(o);
        String flag = flag(o);
        long pid = ProcessHandle.current().pid();
        String before = affinity(pid, flag);
        m.put("bench_jvm_affinity_before", before);
        String brokers = o.brokerCpus() != null ? o.brokerCpus().text() : before;
        System.setProperty("kpipe.it.broker.cpus", brokers);
        m.put("broker_cpus", brokers);
        if (o.clientCpus() != null) {
            taskset(flag, "-a", "-p", "-c", o.clientCpus().text(), Long.toString(pid));
            String after = affinity(pid, flag);
            if (!CpuList.parse(after, flag).cpus().equals(o.clientCpus().cpus())) {
                throw new IllegalArgumentException(
                        flag + " " + o.clientCpus() + ": this JVM's affinity is " + after + " after taskset");
            }
            m.put("client_cpus", after);
        } else {
            m.put("client_cpus", "not pinned (" + before + ")");
        }
        return m;
    }

    /**
     * Checks, changing nothing, that the CPUs asked for exist and that {@code taskset} runs.
     *
     * @param o the side options
     * @throws IllegalArgumentException naming the flag, if {@code taskset} is missing or fails, or a CPU does not exist
     * @throws IOException if {@code /sys/devices/system/cpu/online} cannot be read
     * @throws InterruptedException if interrupted while taskset runs
     */
    static void check(SideOptions o) throws IOException, InterruptedException {
        if (o.brokerCpus() == null && o.clientCpus() == null) {
            return;
        }
        CpuList online = CpuList.parse(Files.readString(ONLINE).trim(), ONLINE.toString());
        if (o.brokerCpus() != null) {
            o.brokerCpus().checkExists(online, "--broker-cpus");
        }
        if (o.clientCpus() != null) {
            o.clientCpus().checkExists(online, "--client-cpus");
        }
        affinity(ProcessHandle.current().pid(), flag(o));
    }

    private static String flag(SideOptions o) {
        return o.clientCpus() != null ? "--client-cpus" : "--broker-cpus";
    }

    /**
     * @param pid a process
     * @param flag the option that asked, named in an error
     * @return its CPU affinity list as {@code taskset -p -c} prints it
     */
    static String affinity(long pid, String flag) throws InterruptedException {
        String out = taskset(flag, "-p", "-c", Long.toString(pid));
        int colon = out.lastIndexOf(':');
        return out.substring(colon + 1).trim();
    }

    private static String taskset(String flag, String... args) throws InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("taskset");
        cmd.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    flag + " needs taskset (util-linux; on Debian apt-get install util-linux) on the PATH: "
                            + e.getMessage(),
                    e);
        }
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + ": reading taskset's output failed: " + e, e);
        }
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalArgumentException(flag + ": " + String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }
}
