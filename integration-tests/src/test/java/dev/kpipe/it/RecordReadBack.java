// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.Cluster;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads a whole topic back with the Java consumer (the kafka-clients of the test class path) after a test wrote it,
 * and checks the order of what it holds: the read-back half of the integration tests that write records and then
 * assert that each is stored once, in order.
 *
 * <p>{@link #readToEnd} assigns every partition of the topic (no consumer group), seeks to the beginning and polls
 * until the consumer's position reaches each partition's end offset as listed when the read starts (the high
 * watermark: every acknowledged {@code acks=all} record, {@code Consumer.endOffsets}), handing each record to the
 * test's check on the calling thread. {@link Order} then checks per stream (a partition, or one producer's records in
 * a partition) that the sequence numbers the test wrote into its records come in the order they were sent, each once.
 */
public final class RecordReadBack {
    /** How long one {@code poll} waits for records. */
    private static final Duration POLL = Duration.ofMillis(500);

    private RecordReadBack() {}

    /**
     * {@link #readToEnd(Map, String, Deserializer, Deserializer, Duration, Consumer)} with the cluster's client
     * config.
     */
    public static <K, V> Counts readToEnd(
            Cluster cluster,
            String topic,
            Deserializer<K> keys,
            Deserializer<V> values,
            Duration timeout,
            Consumer<ConsumerRecord<K, V>> check) {
        return readToEnd(cluster.clientConfig(), topic, keys, values, timeout, check);
    }

    /**
     * Reads every record of every partition of {@code topic}, from the start of the log to the end offsets listed when
     * the read starts, and hands each to {@code check} in the order the consumer returns them (offset order within a
     * partition). A record appended after the end offsets were listed may be handed over (and counted) too.
     *
     * @param consumerConfig bootstrap servers and any consumer settings of the test (e.g. larger fetch sizes); the
     *     map is copied, {@code max.poll.records} is 5000 unless it sets it
     * @param topic an existing topic whose partitions are numbered 0, 1, ... (Kafka's own numbering)
     * @param keys the key deserializer; closed with the consumer
     * @param values the value deserializer; closed with the consumer
     * @param timeout the most the whole read may take, metadata and end offsets included
     * @param check called on the calling thread for each record; an {@link AssertionError} it throws ends the read
     * @return how many records were read per partition
     * @throws AssertionError (opentest4j's {@code AssertionFailedError}) if the topic has no partitions or the end
     *     offsets are not reached within {@code timeout}, or what {@code check} throws
     * @throws org.apache.kafka.common.KafkaException what the consumer throws (e.g. a {@code TimeoutException} for
     *     metadata or end offsets)
     */
    public static <K, V> Counts readToEnd(
            Map<String, Object> consumerConfig,
            String topic,
            Deserializer<K> keys,
            Deserializer<V> values,
            Duration timeout,
            Consumer<ConsumerRecord<K, V>> check) {
        Map<String, Object> cfg = new HashMap<>(consumerConfig);
        cfg.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<K, V> consumer = new KafkaConsumer<>(cfg, keys, values)) {
            List<TopicPartition> tps = consumer.partitionsFor(topic, timeout).stream()
                    .sorted(Comparator.comparingInt(PartitionInfo::partition))
                    .map(p -> new TopicPartition(p.topic(), p.partition()))
                    .toList();
            assertFalse(tps.isEmpty(), "topic " + topic + " has partitions");
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end =
                    consumer.endOffsets(tps, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            long[] perPartition = new long[tps.size()];
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    fail("read " + Arrays.stream(perPartition).sum() + " records of " + topic + " (per partition "
                            + Arrays.toString(perPartition) + ") without reaching the end offsets " + end + " within "
                            + timeout.toSeconds() + " s");
                }
                for (ConsumerRecord<K, V> r : consumer.poll(POLL)) {
                    check.accept(r);
                    perPartition[r.partition()]++;
                }
            }
            return new Counts(perPartition);
        }
    }

    /**
     * Waits until the high watermark of {@code tp} reaches {@code offset}: what a test does before {@link #readToEnd}
     * when it wrote with {@code acks=1} (or {@code acks=0}), whose records are acknowledged before the followers have
     * them and become readable only once the high watermark passes them. Polls the leader every 50 ms with
     * {@code Admin.listOffsets(OffsetSpec.latest())}, which is the high watermark.
     *
     * @param offset the high watermark to wait for, e.g. the number of records written to a new partition
     * @return the high watermark seen, at least {@code offset}
     * @throws AssertionError (opentest4j's {@code AssertionFailedError}) naming the last high watermark seen if it
     *     does not reach {@code offset} within {@code timeout}
     */
    public static long awaitHighWatermark(Cluster cluster, TopicPartition tp, long offset, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long seen = -1;
        while (true) {
            try {
                seen = cluster.admin()
                        .listOffsets(Map.of(tp, OffsetSpec.latest()))
                        .partitionResult(tp)
                        .get(5, TimeUnit.SECONDS)
                        .offset();
            } catch (ExecutionException | TimeoutException e) {
                // leader moving or a slow answer: asked again below until the deadline
            }
            if (seen >= offset) {
                return seen;
            }
            if (System.nanoTime() > deadline) {
                fail("the high watermark of " + tp + " is " + seen + ", not " + offset + ", after "
                        + timeout.toSeconds() + " s");
            }
            Thread.sleep(50);
        }
    }

    /**
     * What {@link #readToEnd} read.
     *
     * @param perPartition records read per partition, indexed by partition
     */
    public record Counts(long[] perPartition) {
        /** @return records read in all partitions */
        public long total() {
            return Arrays.stream(perPartition).sum();
        }

        @Override
        public String toString() {
            return total() + " records, per partition " + Arrays.toString(perPartition);
        }
    }

    /**
     * The order of the sequence numbers read back, per stream: a stream is what a test knows the order of, e.g. one
     * partition, or one producer's records in a partition (streams are numbered 0 to {@code streams - 1}; the test
     * maps its records to them). Not thread-safe: fed from the check of {@link #readToEnd}.
     */
    public static final class Order {
        private final long[] next;
        private final long[] counts;
        /** 0: strictly increasing, {@code next} holds the last one seen; else the distance between consecutive ones. */
        private final long step;

        private final IntFunction<String> name;

        private Order(long[] next, long step, IntFunction<String> name) {
            this.next = next;
            this.counts = new long[next.length];
            this.step = step;
            this.name = name;
        }

        /**
         * Stream {@code s} must hold exactly {@code first(s)}, {@code first(s) + step}, {@code first(s) + 2 * step},
         * ... in that order: none missing between two read, none twice, none out of order (e.g. keys {@code i} sent
         * to partition {@code i % P}: {@code contiguous(P, p -> p, P, ...)}).
         *
         * @param name the stream in failure messages, e.g. {@code s -> "partition " + s}
         */
        public static Order contiguous(int streams, IntToLongFunction first, long step, IntFunction<String> name) {
            if (step <= 0) {
                throw new IllegalArgumentException("step " + step + " must be positive");
            }
            long[] next = new long[streams];
            for (int s = 0; s < streams; s++) {
                next[s] = first.applyAsLong(s);
            }
            return new Order(next, step, name);
        }

        /**
         * Stream {@code s}'s sequence numbers must strictly increase: none twice, none out of order; gaps are allowed
         * (records a test cannot expect, e.g. ones that failed, or ones another stream holds).
         *
         * @param name the stream in failure messages, e.g. {@code s -> "partition " + s}
         */
        public static Order increasing(int streams, IntFunction<String> name) {
            long[] last = new long[streams];
            Arrays.fill(last, Long.MIN_VALUE);
            return new Order(last, 0, name);
        }

        /**
         * Checks that {@code seq} is what stream {@code stream} may hold next, and counts it.
         *
         * @throws AssertionError (opentest4j's {@code AssertionFailedError}) if it is not, or the stream is unknown
         */
        public void next(int stream, long seq) {
            assertTrue(
                    stream >= 0 && stream < next.length,
                    () -> "stream " + stream + " (of " + next.length + ") for sequence number " + seq);
            if (step == 0) {
                assertTrue(
                        seq > next[stream],
                        () -> name.apply(stream) + ": " + seq + " after " + next[stream]
                                + ": out of order or duplicated");
                next[stream] = seq;
            } else {
                assertEquals(next[stream], seq, () -> name.apply(stream) + ": out of order, duplicated or missing");
                next[stream] += step;
            }
            counts[stream]++;
        }

        /** @return how many sequence numbers stream {@code stream} held */
        public long count(int stream) {
            return counts[stream];
        }

        /** @return how many sequence numbers all streams held */
        public long total() {
            return Arrays.stream(counts).sum();
        }
    }
}
