// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A quick real-broker check of pipelined transactional produce and offset commits (KIP-890 deferred dispatch): one
 * transactional Java producer (acks=all, 5 in flight, a commit every 500 records, each transaction also committing a
 * consumer group's offset with {@code sendOffsetsToTransaction}, as an exactly-once application does) against a
 * one-node kpipe cluster. Its produce requests and TXN_OFFSET_COMMITs are pipelined, the first write to each partition
 * in each transaction waits for its verified write ({@code deferred-dispatch-total}), a {@code read_committed}
 * consumer reads every record once, in order per partition, and the group's committed offset is the last
 * transaction's (END_TXN drains: a transaction's offsets are in before its commit). The heavy transaction tests (commit/abort mixes, fencing, Streams exactly-once, a coordinator killed)
 * are elsewhere.
 */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(nodes = 1, kpipe = true)
class TransactionalProduceIT {

    private static final String TOPIC = "txn-pipelined";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 6_000;
    private static final int PER_TRANSACTION = 500;
    private static final String GROUP = "kpipe-txn-it-group";

    @Test
    void transactionalProduceIsPipelinedAndEveryCommittedRecordIsReadOnceInOrder(Cluster cluster) throws Exception {
        cluster.createTopic(TOPIC, PARTITIONS, 1);
        KafkaNode node = cluster.node(1);
        double pipelinedBefore = KpipeJmx.kpipe(node, "pipelined-request-total");
        double deferredBefore = KpipeJmx.kpipe(node, "deferred-dispatch-total");
        double txnCommitsBefore = KpipeJmx.kpipe(node, "pipelined-txn-offset-commit-total");

        Map<String, Object> cfg = new HashMap<>(cluster.clientConfig());
        cfg.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "kpipe-txn-it");
        cfg.put(ProducerConfig.ACKS_CONFIG, "all");
        cfg.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        cfg.put(ProducerConfig.BATCH_SIZE_CONFIG, 16_384);
        cfg.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        cfg.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
        byte[] pad = new byte[1000];
        try (KafkaProducer<String, byte[]> producer =
                new KafkaProducer<>(cfg, new StringSerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            Future<RecordMetadata> last = null;
            for (int i = 0; i < RECORDS; i++) {
                if (i % PER_TRANSACTION == 0) {
                    producer.beginTransaction();
                }
                byte[] value = (i + ":").getBytes(StandardCharsets.US_ASCII);
                byte[] padded = java.util.Arrays.copyOf(value, value.length + pad.length);
                last = producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, "k" + i, padded));
                if (i % PER_TRANSACTION == PER_TRANSACTION - 1) {
                    producer.sendOffsetsToTransaction(
                            Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(i + 1)),
                            new ConsumerGroupMetadata(GROUP));
                    producer.commitTransaction();
                }
            }
            last.get();
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            throw new AssertionError(
                    "the transactional producer stalled; kpipe: pipelined-request-total="
                            + KpipeJmx.kpipe(node, "pipelined-request-total") + " deferred-dispatch-total="
                            + KpipeJmx.kpipe(node, "deferred-dispatch-total") + " drain-total="
                            + KpipeJmx.kpipe(node, "drain-total")
                            + " held-requests=" + KpipeJmx.kpipe(node, "held-requests") + "\n"
                            + node.jmx()
                                    .getAttribute(
                                            new javax.management.ObjectName("kafka.server:type=kpipe-connections"),
                                            "connection-dump"),
                    e);
        }

        Map<String, Object> consumer = new HashMap<>(cluster.clientConfig());
        consumer.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        long[] next = new long[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            next[p] = p;
        }
        RecordReadBack.Counts counts = RecordReadBack.readToEnd(
                consumer,
                TOPIC,
                new StringDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                Duration.ofSeconds(60),
                r -> {
                    String v = new String(r.value(), StandardCharsets.US_ASCII);
                    long seq = Long.parseLong(v.substring(0, v.indexOf(':')));
                    assertEquals(
                            next[r.partition()], seq, "partition " + r.partition() + ": next record in send order");
                    assertEquals("k" + seq, r.key());
                    next[r.partition()] += PARTITIONS;
                });
        for (int p = 0; p < PARTITIONS; p++) {
            assertEquals(
                    RECORDS + p, next[p], "partition " + p + " read to its end"); // RECORDS is a multiple of PARTITIONS
        }
        assertEquals(RECORDS, counts.total(), "every committed record once");

        long committedOffset = cluster.admin()
                .listConsumerGroupOffsets(GROUP)
                .partitionsToOffsetAndMetadata()
                .get(10, java.util.concurrent.TimeUnit.SECONDS)
                .get(new TopicPartition(TOPIC, 0))
                .offset();
        assertEquals(RECORDS, committedOffset, "the last transaction's offset is the group's committed offset");

        double pipelined = KpipeJmx.kpipe(node, "pipelined-request-total") - pipelinedBefore;
        double deferred = KpipeJmx.kpipe(node, "deferred-dispatch-total") - deferredBefore;
        double txnCommits = KpipeJmx.kpipe(node, "pipelined-txn-offset-commit-total") - txnCommitsBefore;
        System.out.printf(
                "TransactionalProduceIT (Kafka %s): %d records in %d transactions, %.0f pipelined requests"
                        + " (%.0f TXN_OFFSET_COMMIT), %.0f deferred dispatches%n",
                cluster.kafkaVersion(), RECORDS, RECORDS / PER_TRANSACTION, pipelined, txnCommits, deferred);
        assertTrue(
                txnCommits >= RECORDS / PER_TRANSACTION,
                "every transaction's TXN_OFFSET_COMMIT was pipelined (kpipe.offset.commits.pipelined; the client retries"
                        + " one the coordinator answers CONCURRENT_TRANSACTIONS): " + txnCommits);
        assertTrue(pipelined > RECORDS / PER_TRANSACTION, "transactional produce pipelined: " + pipelined);
        assertTrue(deferred > 0, "some produce waited for its verified append: " + deferred);
        double fallbacks = KpipeJmx.kpipe(node, "deferred-dispatch-fallback-total");
        assertTrue(
                fallbacks <= deferred / 2,
                "the broker's completion hooks, not the written response, ended the waits: " + fallbacks + " of "
                        + deferred + " by the response");
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "no throwable caught in kpipe");
    }
}
