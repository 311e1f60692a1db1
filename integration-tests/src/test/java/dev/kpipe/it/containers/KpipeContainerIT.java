// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.KpipeLog;
import dev.kpipe.it.RoundTrip;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.kafka.KafkaContainer;

/**
 * kpipe in a Kafka image laid out as the official Apache Kafka image ({@link KpipeContainers}: kpipe's local image by
 * default, {@code apache/kafka} on request), run through Testcontainers' own {@link KafkaContainer} as a user would:
 * the jar in {@code /opt/kafka/libs}, the settings as environment variables. Installed by self-attach (the two lines only) for the class, and as a Java agent in a JVM
 * that forbids attach ({@code KAFKA_OPTS}) in its own container. Each: the start line in the container log, an
 * idempotent producer with 5 requests in flight whose records all arrive once and in per-partition order, and kpipe's
 * counters read with Kafka's JmxTool inside the container (connections upgraded, requests pipelined, no fault).
 *
 * <p>Skipped with one line where no Docker engine is reachable or no image can be had ({@link DockerEngine}). The
 * containers' output is kept under {@code target/it-clusters/containers/} ({@link ContainerLogs}).
 */
@Tag("containers")
@ExtendWith(DockerEngine.class)
class KpipeContainerIT {
    private static final Pattern JMX_VALUE =
            Pattern.compile("kafka\\.server:type=kpipe-metrics:([\\w-]+)=([-0-9.Ee]+)");

    private static Path logs;
    private static KafkaContainer attach;

    @BeforeAll
    static void start() {
        logs = ContainerLogs.folderFor(KpipeContainerIT.class);
        attach = ContainerLogs.keep(KpipeContainers.broker(KpipeContainers.image(true), false), logs, "broker-attach");
        attach.start();
    }

    @AfterAll
    static void stop() {
        if (attach != null) {
            attach.stop();
        }
    }

    @Test
    void selfAttachInstallsKpipeFromTheEnvironmentSettings() throws Exception {
        assertInstalled(attach, "attach");
    }

    @Test
    void pipelinedIdempotentProducerRecordsArriveOnceInOrder() throws Exception {
        assertPipelinedRoundTrip(attach, "container-attach", 20_000);
    }

    @Test
    void javaagentInKafkaOptsInstallsKpipeInAJvmThatForbidsAttach() throws Exception {
        try (KafkaContainer agent = ContainerLogs.keep(
                KpipeContainers.broker(KpipeContainers.image(true), true), logs, "broker-javaagent")) {
            agent.start();
            assertInstalled(agent, "javaagent");
            assertPipelinedRoundTrip(agent, "container-javaagent", 5_000);
        }
    }

    private static void assertInstalled(KafkaContainer kafka, String mode) {
        String log = kafka.getLogs();
        List<String> started = KpipeLog.startedLines(log);
        assertEquals(1, started.size(), () -> "one kpipe start line in the container log: " + started);
        String line = started.get(0);
        assertTrue(line.contains("install mode " + mode), () -> "install mode " + mode + " in: " + line);
        assertTrue(
                line.contains("kpipe.max.inflight.requests.per.connection=16"),
                () -> "KAFKA_KPIPE_MAX_INFLIGHT_REQUESTS_PER_CONNECTION reached kpipe: " + line);
        List<KpipeLog.LogRecord> warnings = KpipeLog.records(log).stream()
                .filter(r -> r.warnOrAbove() && r.aboutKpipe())
                .collect(Collectors.toList());
        assertEquals(List.of(), warnings, "no WARN or ERROR about kpipe in the container log");
    }

    private static void assertPipelinedRoundTrip(KafkaContainer kafka, String topic, int records) throws Exception {
        Map<String, Object> client = new HashMap<>();
        client.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kafka.getBootstrapServers());
        Map<String, Double> before = kpipeMetrics(kafka);
        try (Admin admin = Admin.create(client)) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(60, TimeUnit.SECONDS);
            awaitLeaders(admin, topic, 3);
            RoundTrip.Acks acks = RoundTrip.produceMore(client, topic, 0, records);
            RoundTrip.consumeAndVerify(client, admin, topic, List.of(acks), Duration.ofSeconds(120));
        }
        Map<String, Double> after = kpipeMetrics(kafka);
        assertTrue(after.get("upgrade-total") > before.get("upgrade-total"), "the producer's connection was upgraded");
        assertTrue(after.get("pipelined-request-total") > before.get("pipelined-request-total"), "requests pipelined");
        assertEquals(0.0, after.get("plugin-fault-total"), "no throwable caught in kpipe");
    }

    /** Waits until a ListOffsets to every partition's leader succeeds (CreateTopics returns before leaders serve). */
    private static void awaitLeaders(Admin admin, String topic, int partitions) throws InterruptedException {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                admin.listOffsets(latest).all().get(5, TimeUnit.SECONDS);
                return;
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("partitions of " + topic + " not served within 60 s", e);
                }
                TimeUnit.MILLISECONDS.sleep(100); // back-off between probes
            }
        }
    }

    /** kpipe's counters, read inside the container with Kafka's JmxTool over the image's JMX port. */
    private static Map<String, Double> kpipeMetrics(KafkaContainer kafka) throws Exception {
        ExecResult r = kafka.execInContainer(
                "/opt/kafka/bin/kafka-run-class.sh",
                "org.apache.kafka.tools.JmxTool",
                "--jmx-url",
                "service:jmx:rmi:///jndi/rmi://localhost:" + KpipeContainers.JMX_PORT + "/jmxrmi",
                "--object-name",
                "kafka.server:type=kpipe-metrics",
                "--attributes",
                "upgrade-total,pipelined-request-total,plugin-fault-total",
                "--one-time",
                "true",
                "--report-format",
                "properties");
        Map<String, Double> values = new HashMap<>();
        Matcher m = JMX_VALUE.matcher(r.getStdout());
        while (m.find()) {
            values.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        assertEquals(
                3,
                values.size(),
                () -> "JmxTool output (exit " + r.getExitCode() + "): " + r.getStdout() + r.getStderr());
        return values;
    }
}
