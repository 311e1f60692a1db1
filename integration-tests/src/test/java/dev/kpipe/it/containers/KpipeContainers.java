// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Kafka image laid out as the official Apache Kafka image ({@code apache/kafka}): by default kpipe's local one built
 * from Maven's jars ({@link LocalKafkaImage}), declared a compatible substitute for {@code apache/kafka}, or the
 * official image itself with {@code -Dkpipe.it.container.image=apache/kafka:4.4.0}. Run as an operator would run it
 * with kpipe: an image built {@code FROM} it that copies the drop-in jar into {@code /opt/kafka/libs/} (the recipe of
 * {@code docs/operations.md}), the settings passed as environment variables through Testcontainers' own {@link
 * KafkaContainer}, as a user would write it. The image turns every {@code KAFKA_*}
 * variable into a {@code server.properties} line (Kafka's {@code kafka.docker.KafkaDockerWrapper}: drop {@code
 * KAFKA_}, lower case, {@code _} becomes {@code .}, {@code __} becomes {@code _}, {@code ___} becomes {@code -}),
 * except the JVM ones such as {@code KAFKA_OPTS}, which {@code kafka-run-class.sh} puts on the {@code java} command
 * line. Testcontainers' {@link KafkaContainer} adds the single-node KRaft settings ({@code KAFKA_NODE_ID}, {@code
 * KAFKA_PROCESS_ROLES}, listeners, quorum voters).
 */
final class KpipeContainers {
    /** The kpipe jar's path inside the image. */
    static final String JAR_IN_IMAGE_DIR = "/opt/kafka/libs/";
    /** How long a broker container may take to log that it runs. */
    static final Duration START_TIMEOUT = Duration.ofMinutes(3);
    /** The JMX port the image opens ({@code KAFKA_JMX_PORT}) for Kafka's JmxTool run inside the container. */
    static final int JMX_PORT = 9999;

    private KpipeContainers() {}

    /**
     * @param kpipe whether the image with the kpipe jar in {@code /opt/kafka/libs/} (built with the operator's recipe,
     *     {@code src/test/docker/kpipe/Dockerfile}), else the Kafka image it is built on (stock brokers)
     * @return the image to run ({@link LocalKafkaImage#resolve()}), as a compatible substitute for {@code
     *     apache/kafka}
     * @throws IllegalStateException if there is none (the suite's condition skips before that)
     */
    static DockerImageName image(boolean kpipe) {
        LocalKafkaImage.Resolution r = LocalKafkaImage.resolve();
        if (!r.ready()) {
            throw new IllegalStateException("no Kafka image: " + r.skipReason());
        }
        return DockerImageName.parse(kpipe ? r.kpipeImage() : r.image()).asCompatibleSubstituteFor("apache/kafka");
    }

    /** @return the drop-in jar: {@code kpipe.it.plugin.jar}, set by the build */
    static Path pluginJar() {
        String jar = System.getProperty("kpipe.it.plugin.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("kpipe jar not found at " + jar
                    + ": build it first (mvn -B package -DskipTests from the project root)");
        }
        return Path.of(jar);
    }

    /**
     * @param javaagent whether to also pass the jar as a Java agent with attach forbidden ({@code KAFKA_OPTS})
     * @return the environment kpipe adds to the image's (the two install lines, one limit, JMX for the checks)
     */
    static Map<String, String> kpipeEnv(boolean javaagent) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KAFKA_METRIC_REPORTERS", "dev.kpipe.plugin.KpipePlugin"); // metric.reporters
        env.put("KAFKA_KPIPE_ENABLE", "true"); // kpipe.enable
        env.put("KAFKA_KPIPE_MAX_INFLIGHT_REQUESTS_PER_CONNECTION", "16"); // kpipe.max.inflight.requests.per.connection
        env.put("KAFKA_JMX_PORT", Integer.toString(JMX_PORT));
        if (javaagent) {
            env.put("KAFKA_OPTS", javaagentOption() + " -XX:+DisableAttachMechanism");
        }
        return env;
    }

    /** @return {@code -javaagent:} and the jar's path in the image, the README's {@code KAFKA_OPTS} */
    static String javaagentOption() {
        return "-javaagent:" + JAR_IN_IMAGE_DIR + pluginJar().getFileName();
    }

    /**
     * A single-node KRaft broker with kpipe; not started.
     *
     * @param image an image with the kpipe jar in {@code /opt/kafka/libs/} ({@link #image image(true)}; any name for a
     *     container that is never started)
     * @param javaagent whether kpipe is also a Java agent in a JVM that forbids attach
     * @return the container
     */
    static KafkaContainer broker(DockerImageName image, boolean javaagent) {
        KafkaContainer kafka = new KafkaContainer(image);
        // KafkaContainer waits 60 s for the broker's RUNNING line: under a load of 40 on 2 cores one start took longer
        kafka.withStartupTimeout(START_TIMEOUT);
        kpipeEnv(javaagent).forEach(kafka::withEnv);
        return kafka;
    }
}
