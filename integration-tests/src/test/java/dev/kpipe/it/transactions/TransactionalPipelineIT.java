// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.transactions.TxnLedger.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Transactional Java producers (acks=all, idempotence, 5 in flight, 1 KiB batches) on the slow-ack cluster (the
 * follower delays its fetches, so each produce waits for it), commits and aborts mixed by a seeded {@code Random},
 * three of six partitions per transaction, beside idempotent producers writing the same partitions.
 *
 * <p>Phase 1: two transactional producers alone, so node 1's {@code inflight-requests-per-connection-max} (a maximum
 * since start) is theirs: with pipelined transactional produce (issue #15) more than one of their produce requests
 * was in flight on a connection and {@code deferred-dispatch-total} counted requests whose dispatch waited for the
 * append after KIP-890's verification. Phase 2: two more transactional producers (new to the broker) and two
 * idempotent producers at once. Read back with {@code isolation.level=read_committed}: every committed record once,
 * per producer and partition in the order sent, nothing of an aborted transaction, every acknowledged idempotent
 * record once. {@code kpipe.transactions.pipelined=false} (transactional produce exclusive) would fail the two
 * pipelining assertions only; the correctness checks hold either way.
 */
@KafkaCluster(
        nodes = 2,
        brokerConfig = {"num.io.threads=8"},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=50"})
class TransactionalPipelineIT {
    private static final String TOPIC = "txn-pipeline";
    private static final int PARTITIONS = 6;
    private static final int TXNS = 12;
    private static final int RECORDS_PER_TXN = 150;
    private static final int IDEMPOTENT_RECORDS = 3000;
    private static final Duration AWAIT = Duration.ofSeconds(60);

    @Test
    void committedRecordsOnceInOrderAndAbortedOnesInvisible(Cluster cluster) throws Exception {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(p, List.of(1, 2));
        }
        cluster.createTopics(
                List.of(new NewTopic(TOPIC, assignment).configs(Map.of("min.insync.replicas", "2"))), AWAIT);
        KafkaNode leader = cluster.node(1);
        TxnLedger ledger = new TxnLedger();
        long t0 = System.nanoTime();

        // Phase 1: transactional producers alone.
        List<TxnWriter> phase1 = List.of(writer(cluster, 0, ledger), writer(cluster, 1, ledger));
        runAll(cluster, phase1, List.of());
        double inflightMax = KpipeJmx.kpipe(leader, "inflight-requests-per-connection-max");
        double deferred = KpipeJmx.kpipe(leader, Transactions.DEFERRED_DISPATCH_TOTAL);
        double phase1Seconds = (System.nanoTime() - t0) / 1e9;

        // Phase 2: two new transactional producers and two idempotent ones on the same partitions.
        List<TxnWriter> phase2 = List.of(writer(cluster, 2, ledger), writer(cluster, 3, ledger));
        List<IdempotentWriter> idempotent =
                List.of(new IdempotentWriter(cluster, 100, ledger), new IdempotentWriter(cluster, 101, ledger));
        runAll(cluster, phase2, idempotent);

        Transactions.awaitSettled(cluster, TOPIC, PARTITIONS, AWAIT);
        String summary = Transactions.readCommittedAndCheck(cluster, TOPIC, ledger, AWAIT);
        System.out.printf(
                "TransactionalPipelineIT: %s; phase 1 %.1f s, node 1 inflight-requests-per-connection-max %.0f"
                        + " after it, %s %.0f; produce errors CONCURRENT_TRANSACTIONS %d, OUT_OF_ORDER_SEQUENCE_NUMBER %d; %.1f s in"
                        + " all%n",
                summary,
                phase1Seconds,
                inflightMax,
                Transactions.DEFERRED_DISPATCH_TOTAL,
                deferred,
                KpipeJmx.produceErrors(leader, "CONCURRENT_TRANSACTIONS"),
                KpipeJmx.produceErrors(leader, "OUT_OF_ORDER_SEQUENCE_NUMBER"),
                (System.nanoTime() - t0) / 1e9);

        assertTrue(
                ledger.count(-1, Outcome.COMMITTED) > 0 && ledger.count(-1, Outcome.ABORTED) > 0,
                "the seeds draw both commits and aborts");
        assertEquals(0, ledger.count(-1, Outcome.UNKNOWN), "every transaction ended by commit or abort");
        // An evicted verification (two of one producer at once) answers NETWORK_EXCEPTION, which the broker's
        // ReplicaManager turns into NOT_ENOUGH_REPLICAS for the client; the ISR stays full here, so either means
        // eviction.
        assertTrue(KpipeJmx.produceErrors(leader, "NONE") > 0, "the broker's per-error produce counters are readable");
        assertEquals(
                0,
                KpipeJmx.produceErrors(leader, "NETWORK_EXCEPTION")
                        + KpipeJmx.produceErrors(leader, "NOT_ENOUGH_REPLICAS"),
                "no verification evicted another");
        assertEquals(0.0, KpipeJmx.kpipe(leader, "plugin-fault-total"), "no throwable caught in kpipe code");
        assertTrue(
                inflightMax >= 2,
                "more than one transactional produce request in flight on a connection: " + inflightMax);
        assertTrue(deferred > 0, "produce dispatches waited for the append after verification");
        double fallbacks = KpipeJmx.kpipe(leader, "deferred-dispatch-fallback-total");
        assertTrue(
                fallbacks <= deferred / 2,
                "the broker's completion hooks, not the written response, ended the waits: " + fallbacks + " of "
                        + deferred + " by the response");
    }

    private static TxnWriter writer(Cluster cluster, int index, TxnLedger ledger) {
        return new TxnWriter(
                Transactions.producerConfig(cluster, "txn-pipeline-" + index, "txn-pipeline-" + index),
                index,
                TOPIC,
                PARTITIONS,
                3,
                RECORDS_PER_TXN,
                0.3,
                TXNS,
                15_000L + index,
                ledger);
    }

    private static void runAll(Cluster cluster, List<TxnWriter> writers, List<IdempotentWriter> others)
            throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (Runnable r : concat(writers, others)) {
            Thread t = new Thread(r, "txn-pipeline-writer-" + threads.size());
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(AWAIT.toMillis());
            if (t.isAlive()) {
                fail(t.getName() + " not done within " + AWAIT.toSeconds() + " s; writers' errors "
                        + writers.stream()
                                .map(w -> w.transactionalId() + " " + w.errors)
                                .toList()
                        + "; node 1's connection dump:\n" + Transactions.connectionDump(cluster.node(1)));
            }
        }
        for (TxnWriter w : writers) {
            assertNull(w.failure.get(), () -> w.transactionalId() + " failed; errors " + w.errors);
            // TransactionAbortedException: records still unsent when the writer aborted (its own aborts).
            assertTrue(
                    w.errors.keySet().stream().allMatch(k -> k.equals("send: TransactionAbortedException")),
                    () -> w.transactionalId() + " saw errors " + w.errors);
        }
        for (IdempotentWriter w : others) {
            assertNull(w.failure.get(), "idempotent producer " + w.index + " failed");
        }
    }

    private static List<Runnable> concat(List<? extends Runnable> a, List<? extends Runnable> b) {
        List<Runnable> l = new ArrayList<>(a);
        l.addAll(b);
        return l;
    }

    /** An idempotent (non-transactional) producer writing every partition in turn, flat out, then flushing. */
    private static final class IdempotentWriter implements Runnable {
        final int index;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Map<String, Object> config;
        private final TxnLedger ledger;

        IdempotentWriter(Cluster cluster, int index, TxnLedger ledger) {
            this.index = index;
            this.ledger = ledger;
            this.config = Transactions.producerConfig(cluster, "txn-pipeline-idempotent-" + index, null);
            config.put(ProducerConfig.BATCH_SIZE_CONFIG, 4096);
        }

        @Override
        public void run() {
            int[] seq = new int[PARTITIONS];
            try (KafkaProducer<byte[], byte[]> p =
                    new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < IDEMPOTENT_RECORDS; i++) {
                    int partition = i % PARTITIONS;
                    int s = seq[partition]++;
                    p.send(
                            new ProducerRecord<>(
                                    TOPIC,
                                    partition,
                                    null,
                                    TxnLedger.value(index, partition, s, TxnLedger.NO_TRANSACTION)),
                            (md, e) -> {
                                if (e == null) {
                                    ledger.acked(index, partition, s);
                                } else {
                                    failure.compareAndSet(null, e);
                                }
                            });
                    ledger.sent(index, partition, s, TxnLedger.NO_TRANSACTION);
                }
                p.flush();
            } catch (RuntimeException e) {
                failure.compareAndSet(null, e);
            }
        }
    }
}
