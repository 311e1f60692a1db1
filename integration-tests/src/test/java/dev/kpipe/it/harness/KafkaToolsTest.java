// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tool commands the cluster CLI prints ({@link KafkaTools}) against every laid-out Kafka distribution: each tool's
 * class is where the banner says, and {@code ProducerPerformance} gets the options its version takes without calling
 * them deprecated (asked of the tool itself, {@code --help}: one short JVM per version, about a second each).
 */
class KafkaToolsTest {

    static List<String> laidOutVersions() throws IOException {
        try (Stream<Path> dirs = Files.list(HarnessSettings.load().kafkaDists())) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("kafka-"))
                    .map(HarnessSettings::kafkaVersionOf)
                    .flatMap(Optional::stream)
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    @ParameterizedTest(name = "Kafka {0}")
    @MethodSource("laidOutVersions")
    void everyToolClassIsInTheDistributionAndProducerPerformanceTakesItsOptions(String version) throws Exception {
        Path home = HarnessSettings.load().kafkaHome(version);
        KafkaTools tools = KafkaTools.of(home, version);
        for (List<String> tool : List.of(
                KafkaTools.CONFIG_COMMAND,
                KafkaTools.CONSOLE_PRODUCER,
                KafkaTools.CONSOLE_CONSUMER,
                KafkaTools.PRODUCER_PERFORMANCE,
                KafkaTools.JMX_TOOL)) {
            String name = tools.className(tool);
            assertTrue(tool.contains(name), name);
        }
        String help = run(home, tools.className(KafkaTools.PRODUCER_PERFORMANCE), "--help");
        assertTrue(help.contains("--producer-props"), () -> "ProducerPerformance --help of " + version + ":\n" + help);
        boolean newOptions = KafkaTools.commandPropertyOptions(version);
        assertEquals(newOptions, help.contains("--command-property"), () -> "--command-property in " + help);
        assertEquals(newOptions, help.contains("--bootstrap-server"), () -> "--bootstrap-server in " + help);
        if (newOptions) { // the version that has the new options calls the old one deprecated
            assertTrue(help.contains("(DEPRECATED) Kafka producer"), () -> "--producer-props deprecated in " + help);
        }
    }

    @Test
    void configCommandMovedToTheToolsJarIn44() throws Exception {
        KafkaTools v44 = KafkaTools.of(HarnessSettings.load().kafkaHome("4.4.0"), "4.4.0");
        assertEquals("org.apache.kafka.tools.ConfigCommand", v44.className(KafkaTools.CONFIG_COMMAND));
        assertThrows(IllegalStateException.class, () -> v44.className(List.of("kafka.admin.ConfigCommand")));
        KafkaTools v43 = KafkaTools.of(HarnessSettings.load().kafkaHome("4.3.1"), "4.3.1");
        assertEquals("kafka.admin.ConfigCommand", v43.className(KafkaTools.CONFIG_COMMAND));
    }

    @Test
    void producerPerformanceOptionsByVersion() throws Exception {
        KafkaTools v44 = KafkaTools.of(HarnessSettings.load().kafkaHome("4.4.0"), "4.4.0");
        assertEquals(
                "--bootstrap-server h:1 --command-property acks=all linger.ms=0",
                v44.producerPerformanceOptions("h:1", List.of("acks=all", "linger.ms=0")));
        KafkaTools v41 = KafkaTools.of(HarnessSettings.load().kafkaHome("4.1.2"), "4.1.2");
        assertEquals(
                "--producer-props acks=all bootstrap.servers=h:1",
                v41.producerPerformanceOptions("h:1", List.of("acks=all")));
        assertFalse(KafkaTools.commandPropertyOptions("3.9.1"));
        assertTrue(KafkaTools.commandPropertyOptions("4.2.0"));
        assertTrue(KafkaTools.commandPropertyOptions("5.0.0"));
    }

    private static String run(Path home, String mainClass, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(
                HarnessSettings.load().javaExecutable().toString(), "-cp", home.resolve("libs") + "/*", mainClass));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the tool ended");
        return out;
    }
}
