// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Kafka's command-line tools as a checkout without a distribution's {@code bin/} runs them, {@code java -cp 'libs/*'
 * CLASS}, for one laid-out Kafka version. Their classes moved between Kafka lines, so each is looked up in that
 * version's jars: {@code ConfigCommand} is {@code kafka.admin.ConfigCommand} up to 4.3 and {@code
 * org.apache.kafka.tools.ConfigCommand} from 4.4; {@code ConsoleProducer} is {@code kafka.tools.ConsoleProducer} up to
 * 3.9; {@code ConsoleConsumer} is {@code kafka.tools.ConsoleConsumer} in 3.7. {@code ProducerPerformance} takes {@code
 * --bootstrap-server} and {@code --command-property} from Kafka 4.2 on and reports {@code --producer-props} as
 * deprecated there; older lines know only {@code --producer-props}. {@code KafkaToolsTest} checks both
 * against every laid-out distribution.
 *
 * <p>Immutable once built; reading the jars' entries is file I/O on the calling thread.
 */
final class KafkaTools {
    /** {@code kafka-configs.sh}. */
    static final List<String> CONFIG_COMMAND =
            List.of("org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand");
    /** {@code kafka-console-producer.sh}. */
    static final List<String> CONSOLE_PRODUCER =
            List.of("org.apache.kafka.tools.ConsoleProducer", "kafka.tools.ConsoleProducer");
    /** {@code kafka-console-consumer.sh}. */
    static final List<String> CONSOLE_CONSUMER =
            List.of("org.apache.kafka.tools.consumer.ConsoleConsumer", "kafka.tools.ConsoleConsumer");
    /** {@code kafka-producer-perf-test.sh}. */
    static final List<String> PRODUCER_PERFORMANCE = List.of("org.apache.kafka.tools.ProducerPerformance");
    /** {@code kafka-run-class.sh org.apache.kafka.tools.JmxTool}. */
    static final List<String> JMX_TOOL = List.of("org.apache.kafka.tools.JmxTool");

    private final String version;
    private final Set<String> classes;

    private KafkaTools(String version, Set<String> classes) {
        this.version = version;
        this.classes = classes;
    }

    /**
     * Reads the class names of a distribution's Kafka jars ({@code libs/kafka*.jar}).
     *
     * @param kafkaHome the distribution folder holding {@code libs/}
     * @param version its Kafka version, e.g. {@code 4.4.0}
     * @return the tools of that distribution
     * @throws UncheckedIOException if {@code libs/} or a jar cannot be read
     */
    static KafkaTools of(Path kafkaHome, String version) {
        Set<String> classes = new HashSet<>();
        try (Stream<Path> jars = Files.list(kafkaHome.resolve("libs"))) {
            for (Path jar : (Iterable<Path>) jars::iterator) {
                String name = jar.getFileName().toString();
                if (!name.startsWith("kafka") || !name.endsWith(".jar")) {
                    continue;
                }
                try (JarFile j = new JarFile(jar.toFile())) {
                    j.stream()
                            .map(JarEntry::getName)
                            .filter(n -> n.endsWith(".class"))
                            .forEach(n -> classes.add(n.substring(0, n.length() - ".class".length())
                                    .replace('/', '.')));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the jars of " + kafkaHome, e);
        }
        return new KafkaTools(version, classes);
    }

    /**
     * @param candidates a tool's class names, newest first (e.g. {@link #CONFIG_COMMAND})
     * @return the first that this distribution has
     * @throws IllegalStateException if it has none of them
     */
    String className(List<String> candidates) {
        return candidates.stream()
                .filter(classes::contains)
                .findFirst()
                .orElseThrow(
                        () -> new IllegalStateException("Kafka " + version + " has none of the classes " + candidates));
    }

    /**
     * The options of {@code ProducerPerformance} that name the cluster and the producer's settings, in the form this
     * Kafka version takes without calling it deprecated.
     *
     * @param bootstrap the cluster's {@code bootstrap.servers}
     * @param producerSettings producer settings as {@code key=value}
     * @return e.g. {@code --bootstrap-server B --command-property acks=all} (4.2 and later), else {@code
     *     --producer-props acks=all bootstrap.servers=B}
     */
    String producerPerformanceOptions(String bootstrap, List<String> producerSettings) {
        String settings = String.join(" ", producerSettings);
        return commandPropertyOptions(version)
                ? "--bootstrap-server " + bootstrap + " --command-property " + settings
                : "--producer-props " + settings + " bootstrap.servers=" + bootstrap;
    }

    /**
     * @param version a Kafka version, e.g. {@code 4.2.1}
     * @return whether its {@code ProducerPerformance} takes {@code --bootstrap-server} and {@code --command-property}
     *     (4.2 and later)
     */
    static boolean commandPropertyOptions(String version) {
        String[] parts = version.split("[.-]");
        int major = Integer.parseInt(parts[0]);
        int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
        return major > 4 || (major == 4 && minor >= 2);
    }
}
