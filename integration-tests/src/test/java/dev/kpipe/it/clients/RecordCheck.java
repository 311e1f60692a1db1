package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.Cluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Topics for the client tests and the check of what a client wrote, read back with the Kafka 4.4 Java consumer.
 *
 * <p>The clusters of these tests have a slow follower (node 2 fetches at most every 50 ms,
 * {@code replica.fetch.min.bytes} far above the produce rate): every partition is led by node 1 with node 2 in its ISR
 * and {@code min.insync.replicas=2}, so each {@code acks=all} produce waits up to 50 ms and a client that keeps several
 * requests in flight really has several outstanding on its connection to node 1.
 */
final class RecordCheck {
    /** Broker config for the slow follower (node 2), for {@code @KafkaCluster(nodeConfig = ...)}. */
    static final String SLOW_FOLLOWER_FETCH_MIN_BYTES = "2:replica.fetch.min.bytes=10000000";
    /** How long node 2 waits per fetch, ms: the time an {@code acks=all} produce waits. */
    static final String SLOW_FOLLOWER_FETCH_WAIT = "2:replica.fetch.wait.max.ms=50";

    private RecordCheck() {
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions, replicas [1, 2] (node 1 leads), {@code
     * min.insync.replicas=2}, and waits until its leaders serve it.
     */
    static void createTopic(Cluster cluster, String topic, int partitions) {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            assignment.put(p, List.of(1, 2));
        }
        cluster.createTopics(List.of(new NewTopic(topic, assignment).configs(Map.of("min.insync.replicas", "2"))),
            Duration.ofSeconds(60));
    }

    /**
     * Checks that {@code topic} holds exactly the records {@code [0, count)} of {@link RecordFormat}: the partitions' end
     * offsets add up to {@code count}; reading every partition from its start, each sequence number appears once, with
     * its value, at offsets 0, 1, 2, ... of its partition, and in increasing order within the partition (the order the
     * client sent them in); every partition has records.
     *
     * @param expectedPartition the partition record {@code seq} was sent to, or null where the client's partitioner
     *     chose it (then only the order within each partition is checked)
     * @return the number of records per partition
     */
    static int[] verify(Cluster cluster, String topic, int partitions, int count, IntUnaryOperator expectedPartition)
        throws Exception {
        List<TopicPartition> tps = new ArrayList<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            tps.add(tp);
            latest.put(tp, OffsetSpec.latest());
        }
        long[] end = new long[partitions];
        long stored = 0;
        var offsets = cluster.admin().listOffsets(latest).all().get(30, TimeUnit.SECONDS);
        for (int p = 0; p < partitions; p++) {
            end[p] = offsets.get(tps.get(p)).offset();
            stored += end[p];
        }
        assertEquals(count, stored, "records stored in " + topic + " (end offsets " + Arrays.toString(end)
            + "): none lost, none duplicated");

        Map<String, Object> cfg = cluster.clientConfig();
        cfg.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        boolean[] seen = new boolean[count];
        long[] lastSeq = new long[partitions];
        long[] nextOffset = new long[partitions];
        int[] perPartition = new int[partitions];
        Arrays.fill(lastSeq, -1);
        int consumed = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        try (KafkaConsumer<String, String> consumer =
            new KafkaConsumer<>(cfg, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            while (consumed < count) {
                if (System.nanoTime() > deadline) {
                    fail("read " + consumed + " of " + count + " records of " + topic + " within 60 s");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    int p = r.partition();
                    long seq = RecordFormat.seqOf(r.key());
                    assertTrue(seq >= 0 && seq < count, () -> "unexpected key '" + r.key() + "' at " + r.partition()
                        + "@" + r.offset());
                    assertTrue(!seen[(int) seq], () -> "record " + seq + " stored twice (again at " + p + "@"
                        + r.offset() + ")");
                    assertEquals(nextOffset[p], r.offset(), "offsets of partition " + p + " are contiguous");
                    assertTrue(seq > lastSeq[p], "record " + seq + " after record " + lastSeq[p] + " in partition "
                        + p + ": out of order");
                    if (expectedPartition != null) {
                        assertEquals(expectedPartition.applyAsInt((int) seq), p, "partition of record " + seq);
                    }
                    assertEquals(RecordFormat.value(seq), r.value(), "value of record " + seq);
                    seen[(int) seq] = true;
                    lastSeq[p] = seq;
                    nextOffset[p] = r.offset() + 1;
                    perPartition[p]++;
                    consumed++;
                }
            }
        }
        for (int p = 0; p < partitions; p++) {
            assertTrue(perPartition[p] > 0, "partition " + p + " got records: " + Arrays.toString(perPartition));
        }
        return perPartition;
    }
}
