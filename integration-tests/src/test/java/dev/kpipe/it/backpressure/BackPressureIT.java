// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The broker-wide in-flight byte budget ({@code kpipe.max.inflight.bytes}, 1 MiB here) on a real slow-ack cluster
 * (the follower delays its fetches by 100 ms, so every acks=all produce waits for it and pipelined requests pile up):
 * many producers whose in-flight demand is several times the budget stay within it, and requests larger than the
 * whole budget still complete. Kafka's own request memory pool ({@code queued.max.request.bytes}, 4 MiB) is on too.
 * The full-size run, several hundred producers, is scenario S3 of the benchmark runner.
 *
 * <p>The two tests share the cluster, and the budget's peak metric counts since the broker started: the bound test
 * runs first, before any oversize request.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@KafkaCluster(
        nodes = 2,
        brokerConfig = {
            "kpipe.max.inflight.bytes=1048576",
            "message.max.bytes=8388608",
            // Kafka's own memory pool for requests read (queued.max.request.bytes) keeps working alongside
            "queued.max.request.bytes=4194304",
            "socket.request.max.bytes=4194304"
        },
        nodeConfig = {
            "2:replica.fetch.min.bytes=1000000000",
            "2:replica.fetch.wait.max.ms=100",
            "2:replica.fetch.max.bytes=8388608"
        })
class BackPressureIT {

    private static final long BUDGET = 1024 * 1024;
    private static final int PRODUCERS = 40;

    @Test
    @Order(1)
    void manyProducersStayWithinTheBudgetAndAllComplete(Cluster cluster) throws Exception {
        String topic = "budget-many";
        createTopic(cluster, topic);
        KafkaNode leader = cluster.node(1);
        double waitsBefore = KpipeJmx.kpipe(leader, "budget-wait-total");

        // 40 producers x 5 requests x 16 KiB batches = 3.2 MiB of demand against a 1 MiB budget.
        List<KafkaProducer<Integer, byte[]>> producers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long[] acked = new long[PRODUCERS];
        AtomicReference<Exception> failure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        try {
            for (int p = 0; p < PRODUCERS; p++) {
                producers.add(new KafkaProducer<>(
                        producerConfig(cluster, "budget-" + p, 16_384, 128 * 1024),
                        new IntegerSerializer(),
                        new ByteArraySerializer()));
            }
            for (int p = 0; p < PRODUCERS; p++) {
                int id = p;
                KafkaProducer<Integer, byte[]> producer = producers.get(p);
                Thread t = new Thread(
                        () -> {
                            for (int seq = 0; !stop.get() && failure.get() == null; seq++) {
                                producer.send(new ProducerRecord<>(topic, 0, id, value(seq, 1000)), (md, e) -> {
                                    if (e != null) {
                                        failure.compareAndSet(null, e);
                                    } else {
                                        synchronized (acked) {
                                            acked[id]++;
                                        }
                                    }
                                });
                            }
                        },
                        "budget-producer-" + p);
                t.start();
                threads.add(t);
            }
            awaitTrue(
                    Duration.ofSeconds(60),
                    () -> KpipeJmx.kpipe(leader, "budget-wait-total") - waitsBefore > 100
                            && KpipeJmx.kpipe(leader, "pipelined-connections") >= PRODUCERS,
                    "every producer connection pipelined and the budget made connections wait");
            long target = ackedTotal(acked) + 20_000; // 20 MB more under a saturated budget: the peak is checked
            awaitTrue(
                    Duration.ofSeconds(120),
                    () -> ackedTotal(acked) >= target || failure.get() != null,
                    "20,000 more records acknowledged");
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(30_000);
            }
            for (KafkaProducer<Integer, byte[]> producer : producers) {
                producer.close(Duration.ofSeconds(60));
            }
        }
        assertNull(failure.get(), "no send failed");

        double peak = KpipeJmx.kpipe(leader, "inflight-bytes-max");
        double largest = maxProduceRequestBytes(leader);
        assertTrue(peak > BUDGET / 2, "the budget was actually used: peak " + peak);
        assertTrue(
                peak <= BUDGET + largest,
                "peak admitted in-flight bytes " + peak + " within the budget " + BUDGET + " + the largest request "
                        + largest);
        awaitGaugesZero(leader);

        // Every acknowledged record is stored once, in each producer's order.
        long total = ackedTotal(acked);
        RecordReadBack.Order order = RecordReadBack.Order.contiguous(PRODUCERS, id -> 0, 1, id -> "producer " + id);
        RecordReadBack.Counts read = readBack(
                cluster,
                topic,
                r -> order.next(r.key(), ByteBuffer.wrap(r.value()).getInt(0)));
        assertEquals(total, read.total(), "every acknowledged record stored once");
        for (int p = 0; p < PRODUCERS; p++) {
            assertEquals(acked[p], order.count(p), "producer " + p + ": acknowledged vs stored");
        }
    }

    @Test
    @Order(2)
    void requestsLargerThanTheWholeBudgetComplete(Cluster cluster) throws Exception {
        String topic = "budget-oversize";
        createTopic(cluster, topic);
        KafkaNode leader = cluster.node(1);
        double oversizeBefore = KpipeJmx.kpipe(leader, "budget-oversize-admitted-total");

        // 1.5 MiB records, each in a request of its own: every request is larger than the 1 MiB budget. A small
        // producer runs beside it on the same broker.
        int bigRecords = 12;
        int bigBytes = 1536 * 1024;
        int smallRecords = 3000;
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<Integer, byte[]> big = new KafkaProducer<>(
                        producerConfig(cluster, "oversize", 2 * 1024 * 1024, 32L * 1024 * 1024),
                        new IntegerSerializer(),
                        new ByteArraySerializer());
                KafkaProducer<Integer, byte[]> small = new KafkaProducer<>(
                        producerConfig(cluster, "beside-oversize", 16_384, 1024 * 1024),
                        new IntegerSerializer(),
                        new ByteArraySerializer())) {
            // The first request upgrades the big producer's connection while the budget is empty (an upgrade that
            // finds no room stays classic); the small producer then runs beside it.
            big.send(new ProducerRecord<>(topic, 0, 0, value(0, bigBytes))).get();
            for (int i = 0; i < Math.max(bigRecords, smallRecords); i++) {
                if (i > 0 && i < bigRecords) {
                    big.send(new ProducerRecord<>(topic, 0, 0, value(i, bigBytes)), (md, e) -> fail(failure, e));
                }
                if (i < smallRecords) {
                    small.send(new ProducerRecord<>(topic, 0, 1, value(i, 100)), (md, e) -> fail(failure, e));
                }
            }
            big.flush();
            small.flush();
        }
        assertNull(failure.get(), "no send failed");
        assertEquals(
                bigRecords,
                KpipeJmx.kpipe(leader, "budget-oversize-admitted-total") - oversizeBefore,
                "every oversize request went through kpipe's budget, admitted alone");
        awaitGaugesZero(leader);

        RecordReadBack.Order order = RecordReadBack.Order.contiguous(2, k -> 0, 1, k -> "producer " + k);
        readBack(cluster, topic, r -> {
            order.next(r.key(), ByteBuffer.wrap(r.value()).getInt(0));
            assertEquals(r.key() == 0 ? bigBytes : 100, r.value().length);
        });
        assertEquals(bigRecords, order.count(0), "every oversize record stored once");
        assertEquals(smallRecords, order.count(1), "every small record stored once");
    }

    private static long ackedTotal(long[] acked) {
        synchronized (acked) {
            long total = 0;
            for (long a : acked) {
                total += a;
            }
            return total;
        }
    }

    private static void fail(AtomicReference<Exception> failure, Exception e) {
        if (e != null) {
            failure.compareAndSet(null, e);
        }
    }

    private static void createTopic(Cluster cluster, String topic) {
        cluster.createTopics(
                List.of(new NewTopic(topic, Map.of(0, List.of(1, 2)))
                        .configs(Map.of("min.insync.replicas", "2", "max.message.bytes", "8388608"))),
                Duration.ofSeconds(60));
    }

    private static Map<String, Object> producerConfig(
            Cluster cluster, String clientId, int batchBytes, long bufferBytes) {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, batchBytes);
        props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, bufferBytes);
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * 1024 * 1024);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 60_000);
        return props;
    }

    /**
     * Reads the whole topic back: a record's key is the id of the producer that sent it, its value starts with the
     * producer's sequence number (see {@link #value}).
     */
    private static RecordReadBack.Counts readBack(
            Cluster cluster, String topic, Consumer<ConsumerRecord<Integer, byte[]>> check) {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024);
        props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 16 * 1024 * 1024);
        return RecordReadBack.readToEnd(
                props, topic, new IntegerDeserializer(), new ByteArrayDeserializer(), Duration.ofSeconds(120), check);
    }

    /** Value: the sequence number in its first 4 bytes, then filler up to {@code size} bytes. */
    private static byte[] value(int seq, int size) {
        byte[] b = new byte[size];
        ByteBuffer.wrap(b).putInt(0, seq);
        return b;
    }

    /** @return the largest Produce request the broker read since start, in bytes (RequestMetrics RequestBytes Max) */
    private static double maxProduceRequestBytes(KafkaNode node) throws Exception {
        return ((Number) node.jmx()
                        .getAttribute(
                                new ObjectName("kafka.network:type=RequestMetrics,name=RequestBytes,request=Produce"),
                                "Max"))
                .doubleValue();
    }

    /** Once the clients closed: kpipe holds no connection, request, response or budget byte. */
    private static void awaitGaugesZero(KafkaNode leader) throws Exception {
        awaitTrue(
                Duration.ofSeconds(30),
                () -> KpipeJmx.kpipe(leader, "pipelined-connections") == 0
                        && KpipeJmx.kpipe(leader, "inflight-requests") == 0
                        && KpipeJmx.kpipe(leader, "held-responses") == 0
                        && KpipeJmx.kpipe(leader, "inflight-bytes") == 0
                        && KpipeJmx.kpipe(leader, "budget-waiting-connections") == 0,
                "kpipe's gauges back to 0 after the clients closed");
    }

    @FunctionalInterface
    private interface Check {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(Duration timeout, Check check, String what) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for: " + what);
            }
            Thread.sleep(100);
        }
    }
}
