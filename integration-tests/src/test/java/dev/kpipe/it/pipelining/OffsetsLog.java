// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import dev.kpipe.it.harness.Cluster;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a group's offset commits from the offsets log ({@code __consumer_offsets}) in the order they were appended:
 * the order in which the group coordinator applied them. The record format is the coordinator's (the same for the
 * classic coordinator and KIP-848's runtime, every version kpipe supports): a key of version 0 or 1 is an offset
 * commit ({@code int16} version, group, topic as {@code int16}-length strings, {@code int32} partition); its value
 * starts with an {@code int16} version and the {@code int64} offset, and is null once deleted.
 */
final class OffsetsLog {
    private OffsetsLog() {}

    /**
     * @param cluster the cluster
     * @param group the group
     * @param tp the committed partition
     * @return the offsets committed for it, in log order
     * @throws IllegalStateException if the log cannot be read to its end within 30 s
     */
    static List<Long> committedOffsets(Cluster cluster, String group, TopicPartition tp) throws Exception {
        Map<String, Object> cc = new HashMap<>(cluster.clientConfig());
        cc.put(ConsumerConfig.EXCLUDE_INTERNAL_TOPICS_CONFIG, false);
        cc.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<Long> offsets = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(cc, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = c.partitionsFor(Topic.GROUP_METADATA_TOPIC_NAME).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition()))
                    .toList();
            c.assign(partitions);
            c.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = c.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (partitions.stream().anyMatch(p -> c.position(p) < end.get(p))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the offsets log was not read to its end " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.key() == null || r.value() == null) {
                        continue;
                    }
                    ByteBuffer key = ByteBuffer.wrap(r.key());
                    short version = key.getShort();
                    if (version > 1 || !group.equals(string(key)) || !tp.topic().equals(string(key))) {
                        continue;
                    }
                    if (key.getInt() == tp.partition()) {
                        ByteBuffer value = ByteBuffer.wrap(r.value());
                        value.getShort();
                        offsets.add(value.getLong());
                    }
                }
            }
        }
        return offsets;
    }

    private static String string(ByteBuffer b) {
        byte[] bytes = new byte[b.getShort()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
