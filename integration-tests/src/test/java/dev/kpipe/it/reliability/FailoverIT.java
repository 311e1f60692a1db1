// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Failover under pipelining: 3 nodes, a topic of 12 partitions with replication factor 3 and {@code
 * min.insync.replicas=2}, 4 idempotent producers (acks=all, 5 requests in flight) writing paced records to every
 * partition. Mid-run the broker leading the most partitions is killed with SIGKILL, restarted and awaited back in
 * every ISR; then the same is done to the other broker, which by then leads the partitions the first one lost.
 *
 * <p>Afterwards a consumer reads the whole topic: every acknowledged record is there exactly once, and per partition
 * the records of each producer are in the order it sent them. An idempotent producer may fail a record only by
 * exhausting {@code delivery.timeout.ms}; such an unacknowledged record may or may not be in the log, but never twice
 * and never out of order. No producer hit a fatal error: every failure is a {@link RetriableException}, and each
 * producer can still send after the run. kpipe pipelined the produce traffic before the first kill and after the
 * restarts (its JMX counters), and its per-connection gauges are back to 0 once the producers closed.
 *
 * <p>Node 1 is the harness's only controller, so only brokers 2 and 3 are killed; replica lists put them first for 8
 * of the 12 partitions, so each kill takes down the leader of at least 4 partitions. Brokers heartbeat every 500 ms
 * and are fenced after 4 s of silence (Kafka's defaults: 2 s and 9 s), to keep the run near a minute.
 */
@KafkaCluster(
        nodes = 3,
        brokerConfig = {"broker.heartbeat.interval.ms=500", "broker.session.timeout.ms=4000"})
class FailoverIT {
    private static final String TOPIC = "failover";
    private static final int PARTITIONS = 12;
    private static final int PRODUCERS = 4;
    private static final int RECORDS_PER_SECOND_PER_PRODUCER = 600;
    private static final int VALUE_BYTES = 64;
    private static final Duration STEADY = Duration.ofSeconds(4);
    private static final Duration AWAIT = Duration.ofSeconds(60);

    /** One producer's send loop and what its callbacks saw. Callbacks run on the producer's I/O thread. */
    private static final class Writer implements Runnable {
        final int id;
        final KafkaProducer<byte[], byte[]> producer;
        final int[] sent = new int[PARTITIONS]; // written by the sending thread; read after join
        final BitSet[] acked = new BitSet[PARTITIONS]; // written by the I/O thread; read after close
        final AtomicLong ackCount = new AtomicLong();
        final AtomicLong retriable = new AtomicLong();
        final AtomicLong fatal = new AtomicLong();
        final Map<String, Long> failureKinds = new ConcurrentHashMap<>();
        final AtomicReference<Throwable> firstFatal = new AtomicReference<>();
        final AtomicBoolean stop = new AtomicBoolean();

        Writer(int id, KafkaProducer<byte[], byte[]> producer) {
            this.id = id;
            this.producer = producer;
            for (int p = 0; p < PARTITIONS; p++) {
                acked[p] = new BitSet();
            }
        }

        @Override
        public void run() {
            long start = System.nanoTime();
            long n = 0;
            try {
                while (!stop.get()) {
                    // Paced: record n is due at start + n / rate; send what is due, then sleep a little.
                    long due = start + n * 1_000_000_000L / RECORDS_PER_SECOND_PER_PRODUCER;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(Math.min(wait, 5_000_000));
                        continue;
                    }
                    int p = (int) (n++ % PARTITIONS);
                    int seq = sent[p]++;
                    producer.send(new ProducerRecord<>(TOPIC, p, null, value(id, p, seq)), (md, e) -> {
                        if (e == null) {
                            synchronized (acked[p]) {
                                acked[p].set(seq);
                            }
                            ackCount.incrementAndGet();
                        } else {
                            failureKinds.merge(e.getClass().getSimpleName(), 1L, Long::sum);
                            if (e instanceof RetriableException) {
                                retriable.incrementAndGet();
                            } else {
                                fatal.incrementAndGet();
                                firstFatal.compareAndSet(null, e);
                            }
                        }
                    });
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) { // send() itself threw: the producer is unusable
                fatal.incrementAndGet();
                firstFatal.compareAndSet(null, e);
            }
        }
    }

    @Test
    void acknowledgedRecordsSurviveTwoLeaderKillsOnceAndInOrder(Cluster cluster) throws Exception {
        // Replica lists: broker 2 first for 4 partitions, broker 3 first for 4, node 1 (controller) first for 4.
        Map<Integer, List<Integer>> assignment = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(
                    p,
                    switch (p % 3) {
                        case 0 -> List.of(2, 3, 1);
                        case 1 -> List.of(3, 2, 1);
                        default -> List.of(1, 2, 3);
                    });
        }
        cluster.createTopics(
                List.of(new NewTopic(TOPIC, assignment).configs(Map.of("min.insync.replicas", "2"))), AWAIT);
        awaitPartitions(
                cluster, "every partition with its full ISR", d -> d.isr().size() == 3);

        List<Writer> writers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        Map<String, Object> pipelinedBeforeKill = new LinkedHashMap<>();
        List<String> timeline = new ArrayList<>();
        long t0 = System.nanoTime();
        try {
            for (int i = 0; i < PRODUCERS; i++) {
                Writer w = new Writer(i, new KafkaProducer<>(producerConfig(cluster, i)));
                writers.add(w);
                Thread t = new Thread(w, "failover-writer-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            awaitAcks(writers, 2_000);
            TimeUnit.NANOSECONDS.sleep(STEADY.toNanos());

            Set<Integer> killed = new java.util.HashSet<>();
            for (int round = 1; round <= 2; round++) {
                // The non-controller broker leading the most partitions now, not killed before (ties: lowest id).
                Map<Integer, Long> leaders = leaderCounts(cluster);
                int victim = leaders.entrySet().stream()
                        .filter(e -> e.getKey() != 1 && !killed.contains(e.getKey()))
                        .sorted((a, b) -> a.getValue().equals(b.getValue())
                                ? a.getKey() - b.getKey()
                                : Long.compare(b.getValue(), a.getValue()))
                        .map(Map.Entry::getKey)
                        .findFirst()
                        .orElseThrow(
                                () -> new AssertionError("no broker other than node 1 leads a partition: " + leaders));
                killed.add(victim);
                KafkaNode node = cluster.node(victim);
                double pipelined = KpipeJmx.kpipe(node, "pipelined-request-total");
                double inflightMax = KpipeJmx.kpipe(node, "inflight-requests-per-connection-max");
                pipelinedBeforeKill.put("broker " + victim, pipelined);
                assertTrue(pipelined > 0, "broker " + victim + " pipelined produce requests before it was killed");
                long acksBefore = totalAcks(writers);
                node.kill();
                timeline.add(String.format(
                        "%.1fs kill -9 broker %d (leader of %d/%d partitions, %.0f pipelined requests,"
                                + " %.0f max in flight on a connection)",
                        secondsSince(t0), victim, leaders.get(victim), PARTITIONS, pipelined, inflightMax));
                awaitPartitions(
                        cluster,
                        "leaders moved off broker " + victim,
                        d -> d.leader() != null
                                && d.leader().id() != victim
                                && d.isr().stream().noneMatch(n -> n.id() == victim));
                timeline.add(String.format("%.1fs leaders moved: %s", secondsSince(t0), leaderCounts(cluster)));
                awaitAcks(writers, acksBefore + 2_000); // the surviving replicas take writes with one broker down
                node.start();
                timeline.add(String.format("%.1fs broker %d restarted", secondsSince(t0), victim));
                awaitPartitions(
                        cluster,
                        "broker " + victim + " back in every ISR",
                        d -> d.isr().size() == 3);
                timeline.add(String.format("%.1fs broker %d back in every ISR", secondsSince(t0), victim));
                awaitAcks(writers, totalAcks(writers) + 2_000);
                TimeUnit.NANOSECONDS.sleep(STEADY.toNanos() / 2);
            }
        } finally {
            writers.forEach(w -> w.stop.set(true));
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
        // Every producer is still usable (no fatal state): one more record each, acknowledged; then close (flushes).
        for (Writer w : writers) {
            w.producer.flush();
            int p = w.id % PARTITIONS;
            int seq = w.sent[p]++;
            w.producer
                    .send(new ProducerRecord<>(TOPIC, p, null, value(w.id, p, seq)))
                    .get(60, TimeUnit.SECONDS);
            synchronized (w.acked[p]) {
                w.acked[p].set(seq);
            }
            w.ackCount.incrementAndGet();
            w.producer.close(Duration.ofSeconds(30));
        }
        timeline.add(String.format("%.1fs producers closed", secondsSince(t0)));

        long sent = 0;
        long acked = 0;
        long retriable = 0;
        Map<String, Long> kinds = new TreeMap<>();
        for (Writer w : writers) {
            for (int s : w.sent) {
                sent += s;
            }
            acked += w.ackCount.get();
            retriable += w.retriable.get();
            w.failureKinds.forEach((k, v) -> kinds.merge(k, v, Long::sum));
            assertEquals(0, w.fatal.get(), () -> "producer " + w.id + " hit a fatal error: " + w.firstFatal.get());
        }

        // kpipe pipelined on node 1 (never restarted) and on the first victim after its restart (it leads the
        // partitions the second victim lost); no fault in kpipe code; its per-connection state is released.
        double node1Pipelined = KpipeJmx.kpipe(cluster.node(1), "pipelined-request-total");
        assertTrue(node1Pipelined > 0, "node 1 pipelined produce requests");
        assertTrue(
                KpipeJmx.kpipe(cluster.node(1), "inflight-requests-per-connection-max") > 1,
                "node 1 had more than one request in flight on a connection");
        for (KafkaNode n : cluster.nodes()) {
            assertEquals(0.0, KpipeJmx.kpipe(n, "plugin-fault-total"), "no throwable caught in kpipe code on " + n);
        }
        awaitGaugesZero(cluster);

        Verification v = readBack(cluster, writers);
        String summary = String.format(
                "FailoverIT: sent %d, acknowledged %d, failed %d (retriable %d %s, fatal 0),"
                        + " read %d (%d acknowledged + %d unacknowledged), duplicates 0, out of order 0; pipelined requests before"
                        + " kill %s, node 1 %.0f; %.1f s%n  %s",
                sent,
                acked,
                sent - acked,
                retriable,
                kinds,
                v.read,
                v.read - v.unackedPresent,
                v.unackedPresent,
                pipelinedBeforeKill,
                node1Pipelined,
                secondsSince(t0),
                String.join("\n  ", timeline));
        System.out.println(summary);
        assertEquals(sent, acked + retriable, "every record was acknowledged or failed retriably");
        assertEquals(acked, v.read - v.unackedPresent, "every acknowledged record read");
    }

    /** What the read-back found. */
    private record Verification(long read, long unackedPresent) {}

    /**
     * Reads the whole topic and checks, per partition and producer: sequence numbers strictly increasing (no duplicate,
     * no reordering), every acknowledged one present, nothing that was never sent.
     */
    private static Verification readBack(Cluster cluster, List<Writer> writers) throws Exception {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "failover-verifier");
        int[][] lastSeq = new int[PRODUCERS][PARTITIONS];
        BitSet[][] seen = new BitSet[PRODUCERS][PARTITIONS];
        for (int i = 0; i < PRODUCERS; i++) {
            java.util.Arrays.fill(lastSeq[i], -1);
            for (int p = 0; p < PARTITIONS; p++) {
                seen[i][p] = new BitSet();
            }
        }
        long read = RecordReadBack.readToEnd(
                        props, TOPIC, new ByteArrayDeserializer(), new ByteArrayDeserializer(), AWAIT, r -> {
                            ByteBuffer b = ByteBuffer.wrap(r.value());
                            int producer = b.getInt(0);
                            int partition = b.getInt(4);
                            int seq = b.getInt(8);
                            assertEquals(
                                    r.partition(),
                                    partition,
                                    "record of partition " + partition + " found in " + r.partition());
                            assertTrue(producer >= 0 && producer < PRODUCERS, "unknown producer " + producer);
                            assertTrue(
                                    seq > lastSeq[producer][partition],
                                    () -> String.format(
                                            "partition %d, producer %d: seq %d at" + " offset %d after seq %d (%s)",
                                            partition,
                                            producer,
                                            seq,
                                            r.offset(),
                                            lastSeq[producer][partition],
                                            seen[producer][partition].get(seq) ? "duplicate" : "out of order"));
                            assertTrue(seq < writers.get(producer).sent[partition], "seq " + seq + " was never sent");
                            lastSeq[producer][partition] = seq;
                            seen[producer][partition].set(seq);
                        })
                .total();
        long unackedPresent = 0;
        for (Writer w : writers) {
            for (int p = 0; p < PARTITIONS; p++) {
                BitSet missing = (BitSet) w.acked[p].clone();
                missing.andNot(seen[w.id][p]);
                int partition = p;
                assertTrue(
                        missing.isEmpty(),
                        () -> "producer " + w.id + ", partition " + partition + ": " + missing.cardinality()
                                + " acknowledged record(s) missing, first seq " + missing.nextSetBit(0));
                BitSet extra = (BitSet) seen[w.id][p].clone();
                extra.andNot(w.acked[p]);
                unackedPresent += extra.cardinality();
            }
        }
        return new Verification(read, unackedPresent);
    }

    private static Map<String, Object> producerConfig(Cluster cluster, int id) {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "failover-producer-" + id);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 4096);
        props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 4L * 1024 * 1024);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 120_000);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return props;
    }

    /** @return producer id, partition and per-partition sequence number, then filler */
    private static byte[] value(int producer, int partition, int seq) {
        return ByteBuffer.allocate(VALUE_BYTES)
                .putInt(0, producer)
                .putInt(4, partition)
                .putInt(8, seq)
                .putInt(VALUE_BYTES - 4, ~seq)
                .array();
    }

    private static long totalAcks(List<Writer> writers) {
        return writers.stream().mapToLong(w -> w.ackCount.get()).sum();
    }

    private static void awaitAcks(List<Writer> writers, long atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (totalAcks(writers) < atLeast) {
            if (System.nanoTime() > deadline) {
                fail("producers were not acknowledged " + atLeast + " records within " + AWAIT.toSeconds() + " s (got "
                        + totalAcks(writers) + ")");
            }
            for (Writer w : writers) {
                if (w.fatal.get() > 0) {
                    fail("producer " + w.id + " hit a fatal error", w.firstFatal.get());
                }
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    private static Map<Integer, TopicPartitionInfo> describe(Cluster cluster) throws Exception {
        TopicDescription d = cluster.admin()
                .describeTopics(List.of(TOPIC))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(TOPIC);
        return d.partitions().stream().collect(Collectors.toMap(TopicPartitionInfo::partition, p -> p));
    }

    /** @return broker id to the number of partitions it leads now */
    private static Map<Integer, Long> leaderCounts(Cluster cluster) throws Exception {
        Map<Integer, Long> counts = new TreeMap<>();
        cluster.nodes().forEach(n -> counts.put(n.id(), 0L));
        for (TopicPartitionInfo p : describe(cluster).values()) {
            Node leader = p.leader();
            if (leader != null) {
                counts.merge(leader.id(), 1L, Long::sum);
            }
        }
        return counts;
    }

    private static void awaitPartitions(Cluster cluster, String what, Predicate<TopicPartitionInfo> ok)
            throws Exception {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        Object last = null;
        while (true) {
            try {
                Map<Integer, TopicPartitionInfo> parts = describe(cluster);
                if (parts.size() == PARTITIONS && parts.values().stream().allMatch(ok)) {
                    return;
                }
                last = parts.values();
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e; // a broker just died or restarted: ask again
            }
            if (System.nanoTime() > deadline) {
                fail("not reached within " + AWAIT.toSeconds() + " s: " + what + "; last: " + last);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    /** Waits until kpipe's per-connection and budget gauges are 0 on every broker. */
    private static void awaitGaugesZero(Cluster cluster) throws Exception {
        List<String> gauges = List.of(
                "pipelined-connections",
                "inflight-requests",
                "held-responses",
                "held-requests",
                "inflight-bytes",
                "budget-waiting-connections");
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            Map<String, Double> nonZero = new TreeMap<>();
            for (KafkaNode n : cluster.nodes()) {
                for (String g : gauges) {
                    double v = KpipeJmx.kpipe(n, g);
                    if (v != 0) {
                        nonZero.put("node " + n.id() + " " + g, v);
                    }
                }
            }
            if (nonZero.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                fail("kpipe gauges not back to 0 within 30 s after the producers closed: " + nonZero);
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    private static double secondsSince(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }
}
