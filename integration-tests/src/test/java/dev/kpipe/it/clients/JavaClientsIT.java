// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The Java producer of Kafka 4.4 (this module's clients) and of Kafka 3.9 (in a child JVM with kafka-clients 3.9.1,
 * {@link Java39Client}), idempotent and not, {@code acks=all} with 5 requests in flight, against a kpipe broker with
 * slow acks (see {@link RecordCheck}): each partition holds every record once and in the order sent, the client's
 * connection was pipelined with at least 2 requests in flight at once, and no send was retried (without idempotence a
 * retry could reorder records; on a healthy broker there is none, so the order must hold).
 */
@KafkaCluster(
        nodes = 2,
        nodeConfig = {RecordCheck.SLOW_FOLLOWER_FETCH_MIN_BYTES, RecordCheck.SLOW_FOLLOWER_FETCH_WAIT})
class JavaClientsIT {
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 10_000;
    private static final String LEGACY_VERSION = "3.9.1";

    @Test
    void java44IdempotentProducer(Cluster cluster) throws Exception {
        produceInProcess(cluster, "java44-idempotent", true);
    }

    @Test
    void java44ProducerWithoutIdempotence(Cluster cluster) throws Exception {
        produceInProcess(cluster, "java44-plain", false);
    }

    @Test
    void java39IdempotentProducer(Cluster cluster) throws Exception {
        produceInChildJvm(cluster, "java39-idempotent", true);
    }

    @Test
    void java39ProducerWithoutIdempotence(Cluster cluster) throws Exception {
        produceInChildJvm(cluster, "java39-plain", false);
    }

    private static void produceInProcess(Cluster cluster, String topic, boolean idempotent) throws Exception {
        RecordCheck.createTopic(cluster, topic, PARTITIONS);
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 16_384);
        AtomicInteger sendErrors = new AtomicInteger();
        AtomicReference<Exception> firstError = new AtomicReference<>();
        PipeliningProbe probe = PipeliningProbe.start(cluster.node(1));
        double retries;
        double recordErrors;
        String client;
        long started = System.nanoTime();
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            client = "Java producer " + metric(producer.metrics(), "app-info", "version")
                    + (idempotent ? " (idempotent)" : " (not idempotent)");
            for (int seq = 0; seq < RECORDS; seq++) {
                producer.send(
                        new ProducerRecord<>(topic, seq % PARTITIONS, RecordFormat.key(seq), RecordFormat.value(seq)),
                        (md, e) -> {
                            if (e != null) {
                                sendErrors.incrementAndGet();
                                firstError.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
            retries = ((Number) metric(producer.metrics(), "producer-metrics", "record-retry-total")).doubleValue();
            recordErrors =
                    ((Number) metric(producer.metrics(), "producer-metrics", "record-error-total")).doubleValue();
        }
        long ms = (System.nanoTime() - started) / 1_000_000;
        PipeliningProbe.Observation seen = probe.stop();
        assertEquals(0, sendErrors.get(), () -> client + ": failed sends, first: " + firstError.get());
        assertEquals(0.0, recordErrors, client + ": record-error-total");
        assertEquals(0.0, retries, client + ": record-retry-total (no retry on a healthy broker, so order must hold)");
        PipeliningProbe.assertPipelined(seen, client);
        int[] perPartition = RecordCheck.verify(cluster, topic, PARTITIONS, RECORDS, seq -> seq % PARTITIONS);
        System.out.printf(
                "%s: %d records in %d ms, per partition %s; %s%n",
                client, RECORDS, ms, Arrays.toString(perPartition), seen);
    }

    private static void produceInChildJvm(Cluster cluster, String topic, boolean idempotent) throws Exception {
        String client = "Java producer " + LEGACY_VERSION + (idempotent ? " (idempotent)" : " (not idempotent)");
        RecordCheck.createTopic(cluster, topic, PARTITIONS);
        List<String> cmd = List.of(
                cluster.settings().javaExecutable().toString(),
                "-Xmx256m",
                "-cp",
                legacyClasspath(cluster),
                Java39Client.class.getName(),
                cluster.bootstrapServers(),
                topic,
                Integer.toString(PARTITIONS),
                Integer.toString(RECORDS),
                Boolean.toString(idempotent));
        PipeliningProbe probe = PipeliningProbe.start(cluster.node(1));
        long started = System.nanoTime();
        ExternalProcess.Result run =
                ExternalProcess.run(cmd, cluster.dir().resolve(topic), null, Duration.ofSeconds(120));
        long ms = (System.nanoTime() - started) / 1_000_000;
        PipeliningProbe.Observation seen = probe.stop();
        assertEquals(0, run.exitCode(), run::describe);
        String line = run.lastLine("RESULT ")
                .orElseThrow(
                        () -> new AssertionError("no RESULT line; stdout:\n" + run.stdout() + "\n" + run.describe()));
        Map<String, String> result = Arrays.stream(
                        line.substring("RESULT ".length()).split(" "))
                .map(kv -> kv.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0], kv -> kv[1]));
        String context = client + ": " + line + "\n" + run.stdout() + "\n" + run.describe();
        assertEquals(LEGACY_VERSION, result.get("clientVersion"), context);
        assertEquals(Boolean.toString(idempotent), result.get("idempotent"), context);
        assertEquals(Integer.toString(RECORDS), result.get("produced"), context);
        assertEquals("0", result.get("sendErrors"), context);
        assertEquals("0", result.get("retries"), "record-retry-total; " + context);
        assertEquals(Integer.toString(RECORDS), result.get("consumed"), "consumed by the 3.9 consumer; " + context);
        assertEquals("0", result.get("duplicates"), context);
        assertEquals("0", result.get("outOfOrder"), context);
        assertEquals("0", result.get("badValues"), context);
        PipeliningProbe.assertPipelined(seen, client);
        int[] perPartition = RecordCheck.verify(cluster, topic, PARTITIONS, RECORDS, seq -> seq % PARTITIONS);
        System.out.printf(
                "%s (child JVM): %d records, run %d ms, per partition %s; %s%n",
                client, RECORDS, ms, Arrays.toString(perPartition), seen);
    }

    /**
     * @return kafka-clients 3.9.1 and the jars it needs at run time (slf4j-api, lz4, snappy, zstd) from the laid-out
     *     Kafka 3.9.1 distribution, then the test classes (for {@link Java39Client} and {@link RecordFormat})
     */
    private static String legacyClasspath(Cluster cluster) throws Exception {
        Path libs = cluster.settings().kafkaHome(LEGACY_VERSION).resolve("libs");
        List<String> prefixes = List.of("kafka-clients-", "slf4j-api-", "lz4-java-", "snappy-java-", "zstd-jni-");
        List<String> entries = new ArrayList<>();
        try (Stream<Path> jars = Files.list(libs)) {
            List<Path> all = jars.sorted().collect(Collectors.toList());
            for (String prefix : prefixes) {
                Path jar = all.stream()
                        .filter(j -> j.getFileName().toString().startsWith(prefix)
                                && j.getFileName().toString().endsWith(".jar"))
                        .findFirst()
                        .orElseThrow(() -> new IOException("no " + prefix + "*.jar in " + libs));
                entries.add(jar.toString());
            }
        }
        assertTrue(entries.get(0).endsWith("kafka-clients-" + LEGACY_VERSION + ".jar"), entries::toString);
        entries.add(Path.of(Java39Client.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString());
        return String.join(java.io.File.pathSeparator, entries);
    }

    private static Object metric(Map<MetricName, ? extends Metric> metrics, String group, String name) {
        return metrics.entrySet().stream()
                .filter(e ->
                        e.getKey().group().equals(group) && e.getKey().name().equals(name))
                .map(e -> e.getValue().metricValue())
                .findFirst()
                .orElseThrow(() -> new AssertionError("no producer metric " + group + ":" + name));
    }
}
