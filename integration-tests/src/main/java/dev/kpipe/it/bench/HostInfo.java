// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** What the benchmark records about the machine it runs on. Stateless; any thread. */
final class HostInfo {
    private HostInfo() {}

    /** @return CPUs, load average, JVM and OS of this machine, for the JSON */
    static Map<String, Object> hostMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cpus", cpus());
        m.put(
                "load_average_1m_at_start",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        return m;
    }

    /**
     * @return the machine's online CPUs ({@code /sys/devices/system/cpu/online}), whatever this JVM's affinity
     *     ({@code --client-cpus} narrows {@link Runtime#availableProcessors()}); that count where the file is absent
     */
    static int cpus() {
        try {
            return CpuList.parse(
                            Files.readString(Path.of("/sys/devices/system/cpu/online"))
                                    .trim(),
                            "online")
                    .cpus()
                    .size();
        } catch (IOException | IllegalArgumentException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }

    /** @return Kafka broker JVMs on this machine that this JVM did not start (pid and command line, shortened) */
    static List<String> foreignBrokers() {
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.info()
                        .commandLine()
                        .map(c -> c.contains("kafka.Kafka"))
                        .orElse(false))
                .filter(p -> p.parent().map(pp -> pp.pid() != self).orElse(true))
                .map(p -> p.pid() + " " + abbreviate(p.info().commandLine().orElse("")))
                .collect(Collectors.toList());
    }

    private static String abbreviate(String s) {
        return s.length() <= 160 ? s : s.substring(0, 80) + " ... " + s.substring(s.length() - 75);
    }
}
