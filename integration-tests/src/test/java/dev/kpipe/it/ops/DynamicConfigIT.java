// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.BrokerApiVersions;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.junit.jupiter.api.Test;

/**
 * kpipe's settings changed without a restart through Kafka's dynamic broker config: {@code Admin.incrementalAlterConfigs}
 * on a {@code BROKER} resource, which is what {@code kafka-configs --alter --entity-type brokers} sends (per broker with
 * {@code --entity-name <id>}, cluster-wide with {@code --entity-default}, i.e. the resource name {@code ""}).
 *
 * <p>The brokers start with {@code kpipe.enable=false} (no hooks installed); then, on the same two-node cluster whose
 * follower delays its fetches (so an acks=all produce waits about 50 ms):
 * <ol>
 *   <li>the cluster default {@code kpipe.enable=true} with {@code kpipe.max.inflight.requests.per.connection=2}
 *       installs kpipe on both brokers at runtime;</li>
 *   <li>bad values are rejected with the key named, and the old values stay in force;</li>
 *   <li>a raw connection writing 8 acks=all produce requests back to back has exactly 2 in flight; after a per-broker
 *       override to 16, more than 2;</li>
 *   <li>{@code kpipe.max.inflight.bytes} resizes the broker-wide budget;</li>
 *   <li>while an idempotent producer with 5 requests in flight runs: {@code kpipe.enable=false} drains its pipelined
 *       connection back to classic (pipelined-connections 0, no upgrade while disabled), {@code true} upgrades it
 *       again; every record is acknowledged and stored once, in order.</li>
 * </ol>
 */
@KafkaCluster(
        nodes = 2,
        kpipe = false,
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=50"})
class DynamicConfigIT {
    /** Produce by topic name: v12, or the broker's newest if older (v11 on 3.8/3.9). */
    private static final short PRODUCE_VERSION =
            BrokerApiVersions.harnessDefault().upTo(ApiKeys.PRODUCE, (short) 12);

    private static final String TOPIC = "dynamic-config";
    private static final int PARTITIONS = 3;
    private static final Duration AWAIT = Duration.ofSeconds(30);
    /** Produce requests per raw burst (step 3), one record each to partition 0. */
    private static final int RAW_BURST = 8;

    private static final ConfigResource CLUSTER_DEFAULT = new ConfigResource(ConfigResource.Type.BROKER, "");
    private static final ConfigResource BROKER_1 = new ConfigResource(ConfigResource.Type.BROKER, "1");

    private static final String ENABLE = "kpipe.enable";
    private static final String MAX_INFLIGHT_REQUESTS = "kpipe.max.inflight.requests.per.connection";
    private static final String MAX_INFLIGHT_BYTES = "kpipe.max.inflight.bytes";

    @Test
    void enableAndLimitsChangeAtRuntimeAndDisablingDrainsPipelinedConnections(Cluster cluster) throws Exception {
        cluster.createTopics(
                List.of(new NewTopic(TOPIC, Map.of(0, List.of(1, 2), 1, List.of(1, 2), 2, List.of(1, 2)))
                        .configs(Map.of("min.insync.replicas", "2"))),
                Duration.ofSeconds(60));
        KafkaNode leader = cluster.node(1);
        KafkaNode follower = cluster.node(2);
        assertFalse(hasKpipeMetrics(leader), "started with kpipe.enable=false: nothing installed");

        // 1. Cluster-wide (kafka-configs --entity-default): enable, in-flight limit 2. Each broker installs kpipe.
        alter(cluster, CLUSTER_DEFAULT, Map.of(ENABLE, "true", MAX_INFLIGHT_REQUESTS, "2"));
        for (KafkaNode node : List.of(leader, follower)) {
            await("kpipe installed at runtime on node " + node.id(), () -> hasKpipeMetrics(node));
        }
        // The metrics are published just before the INFO line is logged: await the line too.
        await(
                "the INFO line for the runtime start on node 1",
                () -> !startedAtRuntimeLines(leader).isEmpty());
        List<String> started = startedAtRuntimeLines(leader);
        assertEquals(1, started.size(), "one INFO line for the runtime start: " + started);
        assertTrue(started.get(0).contains("listeners=[PLAINTEXT]"), "never the controller listener: " + started);

        // 2. Bad values fail the request, naming the key; nothing changes.
        assertRejected(cluster, BROKER_1, MAX_INFLIGHT_REQUESTS, "1001");
        assertRejected(cluster, CLUSTER_DEFAULT, MAX_INFLIGHT_BYTES, "0");
        assertRejected(cluster, CLUSTER_DEFAULT, ENABLE, "perhaps");
        assertEquals(100.0 * 1024 * 1024, KpipeJmx.kpipe(leader, "inflight-bytes-limit"), "the default budget stays");

        // 3. The limit in force is 2 (the cluster default; the rejected 1001 did not apply) ...
        rawBurst(leader, RAW_BURST, 1_000);
        assertEquals(2.0, KpipeJmx.kpipe(leader, "inflight-requests-per-connection-max"));
        // ... a per-broker value (kafka-configs --entity-name 1) overrides it.
        alter(cluster, BROKER_1, Map.of(MAX_INFLIGHT_REQUESTS, "16"));
        await("node 1 applied the per-broker limit", () -> leader.log().contains(MAX_INFLIGHT_REQUESTS + "=2 -> 16"));
        rawBurst(leader, RAW_BURST, 2_000);
        double max = KpipeJmx.kpipe(leader, "inflight-requests-per-connection-max");
        assertTrue(max > 2 && max <= RAW_BURST, "more than the old limit of 2 in flight: " + max);

        // 4. The broker-wide byte budget is resized.
        alter(cluster, CLUSTER_DEFAULT, Map.of(MAX_INFLIGHT_BYTES, "52428800"));
        for (KafkaNode node : List.of(leader, follower)) {
            await(
                    "node " + node.id() + " resized its budget",
                    () -> KpipeJmx.kpipe(node, "inflight-bytes-limit") == 52_428_800.0);
        }

        // 5. A pipelined producer runs while kpipe is disabled, then enabled again.
        try (Load load = new Load(cluster)) {
            await(
                    "the producer's connection is pipelined",
                    () -> KpipeJmx.kpipe(leader, "pipelined-connections") >= 1 && load.acked.get() > 1_000);
            double downgrades = KpipeJmx.kpipe(leader, "downgrade-total");

            alter(cluster, CLUSTER_DEFAULT, Map.of(ENABLE, "false"));
            await(
                    "every pipelined connection drained back to classic",
                    () -> KpipeJmx.kpipe(leader, "pipelined-connections") == 0.0);
            assertTrue(KpipeJmx.kpipe(leader, "downgrade-total") > downgrades);
            double upgrades = KpipeJmx.kpipe(leader, "upgrade-total");
            long ackedWhenDisabled = load.acked.get();
            await("records acknowledged on the classic connection", () -> load.acked.get() > ackedWhenDisabled + 2_000);
            assertEquals(upgrades, KpipeJmx.kpipe(leader, "upgrade-total"), "no upgrade while disabled");
            assertEquals(0.0, KpipeJmx.kpipe(leader, "pipelined-connections"));

            alter(cluster, CLUSTER_DEFAULT, Map.of(ENABLE, "true"));
            await(
                    "the producer's connection upgrades again",
                    () -> KpipeJmx.kpipe(leader, "upgrade-total") > upgrades
                            && KpipeJmx.kpipe(leader, "pipelined-connections") >= 1);
            long ackedWhenEnabled = load.acked.get();
            await(
                    "records acknowledged on the pipelined connection again",
                    () -> load.acked.get() > ackedWhenEnabled + 2_000);
            load.finish();
            assertNull(load.failure.get(), "no send failed");
            assertEquals(load.sent, load.acked.get(), "every record acknowledged");
            verifyStoredOnceInOrder(cluster, load.sent, 2 * RAW_BURST);
            System.out.printf(
                    "[dynamic-config] %d records acknowledged and stored once, in order; %d of them on the"
                            + " classic connection (from the drain to the upgrade after re-enabling); upgrades %.0f, downgrades %.0f,"
                            + " drains %.0f%n",
                    load.sent,
                    ackedWhenEnabled - ackedWhenDisabled,
                    KpipeJmx.kpipe(leader, "upgrade-total"),
                    KpipeJmx.kpipe(leader, "downgrade-total"),
                    KpipeJmx.kpipe(leader, "drain-total"));
        }
        assertEquals(0, KpipeJmx.produceErrors(leader, "OUT_OF_ORDER_SEQUENCE_NUMBER"));
        assertEquals(
                0.0, KpipeJmx.kpipe(leader, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");
        assertEquals(0.0, KpipeJmx.kpipe(follower, "plugin-fault-total"));
    }

    // ------------------------------------------------------------------ dynamic config

    private static void alter(Cluster cluster, ConfigResource resource, Map<String, String> settings) throws Exception {
        List<AlterConfigOp> ops = new ArrayList<>();
        settings.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        cluster.admin().incrementalAlterConfigs(Map.of(resource, ops)).all().get(30, TimeUnit.SECONDS);
    }

    private static void assertRejected(Cluster cluster, ConfigResource resource, String key, String value) {
        ExecutionException e = assertThrows(
                ExecutionException.class,
                () -> alter(cluster, resource, Map.of(key, value)),
                key + "=" + value + " must be rejected");
        assertInstanceOf(InvalidRequestException.class, e.getCause());
        String message = e.getCause().getMessage();
        assertTrue(message.contains(key) && message.contains(value), "the error names the key and value: " + message);
    }

    private static boolean hasKpipeMetrics(KafkaNode node) throws Exception {
        return node.jmx().isRegistered(new ObjectName(KpipeJmx.KPIPE_MBEAN));
    }

    private static List<String> startedAtRuntimeLines(KafkaNode node) {
        return node.logLines().stream()
                .filter(l -> l.matches(".*\\bkpipe \\S+ started at runtime\\b.*"))
                .toList();
    }

    private interface Check {
        boolean holds() throws Exception;
    }

    private static void await(String what, Check check) throws Exception {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + AWAIT.toSeconds() + " s: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(50); // poll interval of the condition
        }
    }

    // ------------------------------------------------------------------ raw pipelined connection

    /**
     * Writes {@code count} acks=all produce requests to partition 0 back to back on one connection, then reads every
     * response: in request order, without error.
     */
    private static void rawBurst(KafkaNode node, int count, int firstCorrelationId) throws Exception {
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), "dynamic-config-raw", Duration.ofSeconds(30))) {
            for (int i = 0; i < count; i++) {
                conn.send(firstCorrelationId + i, produce("raw-" + firstCorrelationId + "-" + i));
            }
            for (int i = 0; i < count; i++) {
                Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, PRODUCE_VERSION), firstCorrelationId + i);
            }
        }
    }

    private static ProduceRequest produce(String value) {
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData()
                .setName(TOPIC)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(0)
                        .setRecords(MemoryRecords.withRecords(
                                Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8)))))));
        ProduceRequestData data = new ProduceRequestData()
                .setAcks((short) -1)
                .setTimeoutMs(30_000)
                .setTopicData(topics);
        return new ProduceRequest.Builder(PRODUCE_VERSION, PRODUCE_VERSION, data).build(PRODUCE_VERSION);
    }

    // ------------------------------------------------------------------ the producer

    /**
     * An idempotent producer with 5 requests in flight sending keys 0, 1, 2, ... round-robin over the partitions from
     * its own thread until {@link #finish()}, at most 5,000 records unacknowledged at a time.
     */
    private static final class Load implements AutoCloseable {
        final AtomicLong acked = new AtomicLong();
        final AtomicReference<Exception> failure = new AtomicReference<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Semaphore window = new Semaphore(5_000);
        private final KafkaProducer<Integer, byte[]> producer;
        private final Thread thread;
        volatile long sent;

        Load(Cluster cluster) {
            Map<String, Object> props = new HashMap<>(cluster.clientConfig());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            props.put(ProducerConfig.BATCH_SIZE_CONFIG, 16_384);
            producer = new KafkaProducer<>(props, new IntegerSerializer(), new ByteArraySerializer());
            thread = new Thread(this::run, "dynamic-config-producer");
            thread.start();
        }

        private void run() {
            try {
                for (int i = 0; !stop.get(); i++) {
                    if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        i--;
                        continue;
                    }
                    producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, i, value(i)), (md, e) -> {
                        window.release();
                        if (e != null) {
                            failure.compareAndSet(null, e);
                        } else {
                            acked.incrementAndGet();
                        }
                    });
                    sent = i + 1;
                }
            } catch (Exception e) {
                failure.compareAndSet(null, e);
            }
        }

        /** Stops sending and waits until every record sent is acknowledged or failed. */
        void finish() throws InterruptedException {
            stop.set(true);
            thread.join(TimeUnit.SECONDS.toMillis(30));
            producer.flush();
        }

        /**
         * Stops sending, waits up to 30 s for the sending thread and closes the producer. Throws nothing checked (an
         * {@link AutoCloseable} whose {@code close} throws {@link InterruptedException} is what javac's try lint
         * warns about): interrupted, it keeps the thread's interrupt status and still closes the producer.
         */
        @Override
        public void close() {
            stop.set(true);
            try {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                producer.close(Duration.ofSeconds(30));
            }
        }
    }

    private static byte[] value(int i) {
        return ByteBuffer.allocate(100).putInt(0, i).putInt(96, ~i).array();
    }

    /**
     * Per partition p the keys must be p, p+P, p+2P, ... exactly once each: every record once, in order. Partition 0
     * also holds the raw connection's {@code rawRecords} records (no key), written before the producer ran.
     */
    private static void verifyStoredOnceInOrder(Cluster cluster, long records, int rawRecords) {
        RecordReadBack.Order order =
                RecordReadBack.Order.contiguous(PARTITIONS, p -> p, PARTITIONS, p -> "partition " + p);
        long[] raw = new long[1];
        RecordReadBack.Counts read = RecordReadBack.readToEnd(
                cluster, TOPIC, new IntegerDeserializer(), new ByteArrayDeserializer(), Duration.ofSeconds(60), r -> {
                    if (r.partition() == 0 && r.key() == null) {
                        raw[0]++; // the raw connection's records
                        return;
                    }
                    order.next(r.partition(), r.key());
                    assertEquals(ByteBuffer.wrap(value(r.key())), ByteBuffer.wrap(r.value()));
                });
        assertEquals(records, order.total(), "every record present, none beyond those produced: " + read);
        assertEquals(rawRecords, raw[0], "the raw connection's records in partition 0, none beyond them: " + read);
    }
}
