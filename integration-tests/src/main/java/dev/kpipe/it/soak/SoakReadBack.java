// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import dev.kpipe.it.harness.Cluster;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** The soak's final check: reads the main topic back against the producers' ledger (caller's thread, once). */
final class SoakReadBack {
    private final Cluster cluster;
    private final SoakStats stats;
    private final Consumer<String> violations;

    /** @param violations where each failed check goes ({@link SoakRun}'s list) */
    SoakReadBack(Cluster cluster, SoakStats stats, Consumer<String> violations) {
        this.cluster = cluster;
        this.stats = stats;
        this.violations = violations;
    }

    /**
     * Reads the whole main topic and checks each idempotent producer incarnation's records: per partition, sequence
     * numbers 0, 1, 2, ... each exactly once and in order, up to the number it sent.
     *
     * @return {records read, incarnations checked}
     */
    long[] readBack() throws Exception {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "soak-read-back");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 8 << 20);
        Map<Long, int[]> next = new HashMap<>();
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < SoakWorkers.PARTITIONS; p++) {
                tps.add(new TopicPartition(SoakWorkers.TOPIC, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
            long total = end.values().stream().mapToLong(Long::longValue).sum();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(120, total / 10_000));
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    violation("read-back did not reach the end offsets " + end + " in time (read " + read + ")");
                    break;
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    read++;
                    ByteBuffer b = ByteBuffer.wrap(r.value());
                    int slot = b.getInt(0);
                    int inc = b.getInt(4);
                    int partition = b.getInt(8);
                    int seq = b.getInt(12);
                    String where = String.format(
                            Locale.ROOT,
                            "partition %d offset %d (producer %d incarnation %d seq %d)",
                            r.partition(),
                            r.offset(),
                            slot,
                            inc,
                            seq);
                    if (r.value().length != SoakWorkers.VALUE_BYTES
                            || partition != r.partition()
                            || b.getInt(SoakWorkers.VALUE_BYTES - 4) != ~seq) {
                        violation("corrupt record at " + where);
                        continue;
                    }
                    SoakStats.Incarnation led = stats.ledger.get(SoakStats.key(slot, inc));
                    if (led == null) {
                        violation("record of an unknown producer incarnation at " + where);
                        continue;
                    }
                    int[] nx = next.computeIfAbsent(SoakStats.key(slot, inc), k -> new int[SoakWorkers.PARTITIONS]);
                    if (seq != nx[partition]) {
                        violation((seq < nx[partition] ? "duplicate or reordered" : "gap before") + " record at "
                                + where + ", expected seq " + nx[partition]);
                    }
                    nx[partition] = Math.max(nx[partition], seq + 1);
                }
            }
        }
        for (SoakStats.Incarnation led : stats.ledger.values()) {
            int[] nx = next.getOrDefault(SoakStats.key(led.slot(), led.incarnation()), new int[SoakWorkers.PARTITIONS]);
            for (int p = 0; p < SoakWorkers.PARTITIONS; p++) {
                if (nx[p] != led.sent()[p]) {
                    violation(String.format(
                            Locale.ROOT,
                            "producer %d incarnation %d partition %d: sent %d records, read" + " back up to seq %d",
                            led.slot(),
                            led.incarnation(),
                            p,
                            led.sent()[p],
                            nx[p]));
                }
                if (led.acked().get(p) != led.sent()[p]) {
                    violation(String.format(
                            Locale.ROOT,
                            "producer %d incarnation %d partition %d: sent %d, acknowledged %d",
                            led.slot(),
                            led.incarnation(),
                            p,
                            led.sent()[p],
                            led.acked().get(p)));
                }
            }
        }
        return new long[] {read, stats.ledger.size()};
    }

    private void violation(String what) {
        violations.accept(what);
    }
}
