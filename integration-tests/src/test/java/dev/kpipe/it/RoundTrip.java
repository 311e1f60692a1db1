// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.Cluster;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;

/**
 * Produce/consume round trip with checks on every record: key = sequence number, value derived from it; the consumer
 * must see each sequence number exactly once, at the partition and offset the producer was acknowledged with, with
 * the right bytes, and offsets and keys strictly increasing per partition. Runs on the calling thread.
 */
public final class RoundTrip {
    private RoundTrip() {}

    /** @return the value of record {@code seq}: "v{seq}:" then 20..319 pseudo-random bytes seeded by seq */
    public static byte[] valueFor(long seq) {
        byte[] prefix = ("v" + seq + ":").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] body = new byte[20 + (int) (seq * 7919 % 300)];
        new SplittableRandom(seq).nextBytes(body);
        byte[] v = Arrays.copyOf(prefix, prefix.length + body.length);
        System.arraycopy(body, 0, v, prefix.length, body.length);
        return v;
    }

    /** Creates {@code topic} (waiting until its leaders serve it) and sends records {@code [0, count)} with an idempotent producer; checks the acks. */
    public static Acks produce(Cluster cluster, String topic, int partitions, short replicationFactor, int count)
            throws Exception {
        cluster.createTopic(topic, partitions, replicationFactor);
        return produceMore(cluster, topic, 0, count);
    }

    /** Sends records {@code [from, from + count)} to an existing topic with an idempotent producer; checks the acks. */
    public static Acks produceMore(Cluster cluster, String topic, long from, int count) throws Exception {
        return produceMore(cluster.clientConfig(), topic, from, count);
    }

    /**
     * Sends records {@code [from, from + count)} to an existing topic with an idempotent producer (acks=all, 5 in
     * flight); checks the acks.
     *
     * @param clientConfig bootstrap servers (and security settings) of any Kafka cluster, e.g. a container's
     */
    public static Acks produceMore(Map<String, Object> clientConfig, String topic, long from, int count)
            throws Exception {
        Map<String, Object> cfg = new HashMap<>(clientConfig);
        cfg.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        cfg.put(ProducerConfig.ACKS_CONFIG, "all");
        cfg.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        cfg.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        cfg.put(ProducerConfig.BATCH_SIZE_CONFIG, 16 * 1024);
        cfg.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        Acks acks = new Acks(from, count);
        ConcurrentLinkedQueue<Exception> errors = new ConcurrentLinkedQueue<>();
        try (KafkaProducer<Long, byte[]> producer =
                new KafkaProducer<>(cfg, new LongSerializer(), new ByteArraySerializer())) {
            for (long seq = from; seq < from + count; seq++) {
                final int i = (int) (seq - from);
                producer.send(new ProducerRecord<>(topic, seq, valueFor(seq)), (md, e) -> {
                    if (e != null) {
                        errors.add(e);
                    } else {
                        acks.partition[i] = md.partition();
                        acks.offset[i] = md.offset();
                    }
                });
            }
            producer.flush();
        }
        if (!errors.isEmpty()) {
            fail(errors.size() + " sends failed, first: " + errors.peek(), errors.peek());
        }
        for (int i = 0; i < count; i++) {
            assertTrue(acks.partition[i] >= 0 && acks.offset[i] >= 0, "no ack for record " + (from + i));
        }
        return acks;
    }

    /**
     * Checks the topic's end offsets, then consumes the whole topic with a consumer group and checks every record.
     *
     * @param acks all acks of the records in the topic, in sequence order
     */
    public static void consumeAndVerify(Cluster cluster, String topic, List<Acks> acks, Duration timeout)
            throws Exception {
        consumeAndVerify(cluster.clientConfig(), cluster.admin(), topic, acks, timeout);
    }

    /**
     * {@link #consumeAndVerify(Cluster, String, List, Duration)} against any Kafka cluster.
     *
     * @param clientConfig bootstrap servers (and security settings), e.g. a container's
     * @param admin an Admin client of that cluster
     */
    public static void consumeAndVerify(
            Map<String, Object> clientConfig,
            org.apache.kafka.clients.admin.Admin admin,
            String topic,
            List<Acks> acks,
            Duration timeout)
            throws Exception {
        Map<Long, Integer> expectedPartition = new HashMap<>();
        Map<Long, Long> expectedOffset = new HashMap<>();
        for (Acks a : acks) {
            for (int i = 0; i < a.count; i++) {
                expectedPartition.put(a.from + i, a.partition[i]);
                expectedOffset.put(a.from + i, a.offset[i]);
            }
        }
        int total = expectedPartition.size();
        int partitions = admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get(30, TimeUnit.SECONDS)
                .get(topic)
                .partitions()
                .size();

        // The log holds exactly what was acknowledged: no duplicates, nothing lost.
        Map<TopicPartition, OffsetSpec> latest = IntStream.range(0, partitions)
                .boxed()
                .collect(Collectors.toMap(p -> new TopicPartition(topic, p), p -> OffsetSpec.latest()));
        Map<TopicPartition, Long> ends = admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
        for (int p = 0; p < partitions; p++) {
            final int part = p;
            long acked =
                    expectedPartition.values().stream().filter(x -> x == part).count();
            assertEquals(acked, ends.get(new TopicPartition(topic, p)), "end offset of partition " + p);
        }

        Map<String, Object> cfg = new HashMap<>(clientConfig);
        cfg.put(ConsumerConfig.GROUP_ID_CONFIG, "verify-" + topic + "-" + UUID.randomUUID());
        cfg.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cfg.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        long[] lastOffset = new long[partitions];
        long[] lastKey = new long[partitions];
        Arrays.fill(lastOffset, -1);
        Arrays.fill(lastKey, -1);
        Set<Long> seen = new java.util.HashSet<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<Long, byte[]> consumer =
                new KafkaConsumer<>(cfg, new LongDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (seen.size() < total) {
                if (System.nanoTime() > deadline) {
                    fail("consumed " + seen.size() + " of " + total + " records within " + timeout.toSeconds() + " s");
                }
                for (ConsumerRecord<Long, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    long seq = r.key();
                    int p = r.partition();
                    assertTrue(seen.add(seq), "duplicate record " + seq);
                    assertEquals(expectedPartition.get(seq), p, "partition of record " + seq);
                    assertEquals(expectedOffset.get(seq), r.offset(), "offset of record " + seq);
                    assertEquals(lastOffset[p] + 1, r.offset(), "offset gap in partition " + p);
                    assertTrue(seq > lastKey[p], "record " + seq + " after " + lastKey[p] + " in partition " + p);
                    assertTrue(Arrays.equals(valueFor(seq), r.value()), "value of record " + seq);
                    lastOffset[p] = r.offset();
                    lastKey[p] = seq;
                }
            }
        }
        assertEquals(total, seen.size());
    }

    /** Where the broker acknowledged records {@code [from, from + count)}. */
    public static final class Acks {
        final long from;
        final int count;
        final int[] partition;
        final long[] offset;

        Acks(long from, int count) {
            this.from = from;
            this.count = count;
            this.partition = new int[count];
            this.offset = new long[count];
            Arrays.fill(partition, -1);
            Arrays.fill(offset, -1);
        }
    }
}
