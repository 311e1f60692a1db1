// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;
import org.apache.kafka.clients.admin.NewTopic;
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

    private RecordCheck() {}

    /**
     * Creates {@code topic} with {@code partitions} partitions, replicas [1, 2] (node 1 leads), {@code
     * min.insync.replicas=2}, and waits until its leaders serve it.
     */
    static void createTopic(Cluster cluster, String topic, int partitions) {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            assignment.put(p, List.of(1, 2));
        }
        cluster.createTopics(
                List.of(new NewTopic(topic, assignment).configs(Map.of("min.insync.replicas", "2"))),
                Duration.ofSeconds(60));
    }

    /**
     * Checks that {@code topic} holds exactly the records {@code [0, count)} of {@link RecordFormat}: reading every
     * partition from its start to its end offset, each sequence number appears once, with its value, at offsets 0, 1,
     * 2, ... of its partition, and in increasing order within the partition (the order the client sent them in); the
     * partitions hold {@code count} records in all, and every partition has records.
     *
     * @param expectedPartition the partition record {@code seq} was sent to, or null where the client's partitioner
     *     chose it (then only the order within each partition is checked)
     * @return the number of records per partition
     */
    static int[] verify(Cluster cluster, String topic, int partitions, int count, IntUnaryOperator expectedPartition) {
        boolean[] seen = new boolean[count];
        RecordReadBack.Order offsets =
                RecordReadBack.Order.contiguous(partitions, p -> 0, 1, p -> "offsets of partition " + p);
        RecordReadBack.Order order = RecordReadBack.Order.increasing(partitions, p -> "records of partition " + p);
        RecordReadBack.Counts read = RecordReadBack.readToEnd(
                cluster, topic, new StringDeserializer(), new StringDeserializer(), Duration.ofSeconds(60), r -> {
                    int p = r.partition();
                    long seq = RecordFormat.seqOf(r.key());
                    assertTrue(
                            seq >= 0 && seq < count,
                            () -> "unexpected key '" + r.key() + "' at " + p + "@" + r.offset());
                    assertFalse(
                            seen[(int) seq],
                            () -> "record " + seq + " stored twice (again at " + p + "@" + r.offset() + ")");
                    offsets.next(p, r.offset());
                    order.next(p, seq);
                    if (expectedPartition != null) {
                        assertEquals(expectedPartition.applyAsInt((int) seq), p, "partition of record " + seq);
                    }
                    assertEquals(RecordFormat.value(seq), r.value(), "value of record " + seq);
                    seen[(int) seq] = true;
                });
        assertEquals(count, read.total(), "records stored in " + topic + " (" + read + "): none lost, none duplicated");
        int[] perPartition =
                Arrays.stream(read.perPartition()).mapToInt(Math::toIntExact).toArray();
        assertEquals(partitions, perPartition.length, "partitions of " + topic);
        for (int p = 0; p < partitions; p++) {
            assertTrue(perPartition[p] > 0, "partition " + p + " got records: " + Arrays.toString(perPartition));
        }
        return perPartition;
    }
}
