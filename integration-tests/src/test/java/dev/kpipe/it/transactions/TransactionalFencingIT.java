// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.transactions.TxnLedger.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Fencing mid-pipeline on the slow-ack cluster (W = 200 ms): producer A ({@code transactional.id} X) commits one
 * transaction, then begins a second and keeps sending into it, so it has produce requests in flight, when producer B
 * with the same {@code transactional.id} calls {@code initTransactions()}. B's InitProducerId bumps the epoch and
 * aborts A's open transaction: A gets the fencing error (the client surfaces {@code ProducerFencedException} or
 * {@code InvalidProducerEpochException}), its commit fails, nothing of its second transaction is visible to {@code
 * read_committed}, and B's transaction commits normally. A's first transaction and B's are read back once and in
 * order.
 */
@KafkaCluster(
        nodes = 2,
        brokerConfig = {"num.io.threads=8"},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=200"})
class TransactionalFencingIT {
    private static final String TOPIC = "txn-fencing";
    private static final String TXN_ID = "fenced-txn";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 90;
    private static final int MAX_FENCED_RECORDS = 50_000;
    private static final Duration AWAIT = Duration.ofSeconds(60);

    @Test
    void secondProducerFencesTheFirstWhileItsRequestsAreInFlight(Cluster cluster) throws Exception {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(p, List.of(1, 2));
        }
        cluster.createTopics(
                List.of(new NewTopic(TOPIC, assignment).configs(Map.of("min.insync.replicas", "2"))), AWAIT);
        TxnLedger ledger = new TxnLedger();
        List<Throwable> aErrors = Collections.synchronizedList(new ArrayList<>());
        int[] seqA = new int[PARTITIONS];

        Map<String, Object> aConfig = Transactions.producerConfig(cluster, "fencing-a", TXN_ID);
        aConfig.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64 * 1024);
        KafkaProducer<byte[], byte[]> a =
                new KafkaProducer<>(aConfig, new ByteArraySerializer(), new ByteArraySerializer());
        Thread sender = null;
        AtomicBoolean stop = new AtomicBoolean();
        try {
            a.initTransactions();
            // A's first transaction commits.
            ledger.begin(0, 0);
            a.beginTransaction();
            sendAll(a, 0, 0, seqA, ledger, aErrors);
            a.commitTransaction();
            ledger.end(0, 0, Outcome.COMMITTED);

            // A's second transaction: sent into until A sees an error.
            ledger.begin(0, 1);
            a.beginTransaction();
            AtomicInteger acked = new AtomicInteger();
            AtomicInteger sentInTxn1 = new AtomicInteger();
            sender = new Thread(
                    () -> {
                        try {
                            for (int i = 0; i < MAX_FENCED_RECORDS && !stop.get() && aErrors.isEmpty(); i++) {
                                int partition = i % PARTITIONS;
                                int seq = seqA[partition]++;
                                a.send(
                                        new ProducerRecord<>(
                                                TOPIC, partition, null, TxnLedger.value(0, partition, seq, 1)),
                                        (md, e) -> {
                                            if (e == null) {
                                                acked.incrementAndGet();
                                            } else {
                                                aErrors.add(e);
                                            }
                                        });
                                ledger.sent(0, partition, seq, 1);
                                sentInTxn1.incrementAndGet();
                            }
                        } catch (KafkaException e) {
                            aErrors.add(e);
                        }
                    },
                    "fencing-a-sender");
            sender.setDaemon(true);
            sender.start();
            awaitTrue(
                    cluster,
                    () -> acked.get() > 0 && LoadMetrics.requestsInFlight(a) >= 2,
                    "A has records of its second transaction acknowledged and 2 or more requests in flight");
            int inFlightAtFence = (int) LoadMetrics.requestsInFlight(a);
            int sentBeforeFence = sentInTxn1.get();

            // B with the same transactional.id fences A.
            Map<String, Object> bConfig = Transactions.producerConfig(cluster, "fencing-b", TXN_ID);
            try (KafkaProducer<byte[], byte[]> b =
                    new KafkaProducer<>(bConfig, new ByteArraySerializer(), new ByteArraySerializer())) {
                b.initTransactions();
                ledger.end(0, 1, Outcome.ABORTED); // InitProducerId aborted A's open transaction
                awaitTrue(cluster, () -> !aErrors.isEmpty(), "A sees an error after B's initTransactions");
                stop.set(true);
                sender.join(AWAIT.toMillis());
                KafkaException commitError =
                        assertThrows(KafkaException.class, a::commitTransaction, "A's commit after it was fenced");
                aErrors.add(commitError);

                ledger.begin(1, 0);
                b.beginTransaction();
                int[] seqB = new int[PARTITIONS];
                List<Throwable> bErrors = Collections.synchronizedList(new ArrayList<>());
                sendAll(b, 1, 0, seqB, ledger, bErrors);
                b.commitTransaction();
                ledger.end(1, 0, Outcome.COMMITTED);
                assertTrue(bErrors.isEmpty(), () -> "B's sends failed: " + bErrors);
            }
            assertTrue(
                    aErrors.stream().anyMatch(TransactionalFencingIT::isFencing),
                    () -> "A got a fencing error: "
                            + aErrors.stream()
                                    .map(Throwable::toString)
                                    .distinct()
                                    .toList());

            Transactions.awaitSettled(cluster, TOPIC, PARTITIONS, AWAIT);
            String summary = Transactions.readCommittedAndCheck(cluster, TOPIC, ledger, AWAIT);
            double deferred = KpipeJmx.kpipe(cluster.node(1), Transactions.DEFERRED_DISPATCH_TOTAL);
            double inflightMax = KpipeJmx.kpipe(cluster.node(1), "inflight-requests-per-connection-max");
            System.out.printf(
                    "TransactionalFencingIT: %s; A had %d requests in flight (client side) and %d records of its"
                            + " second transaction sent when B started (%d in all); A's errors %s; node 1"
                            + " inflight-requests-per-connection-max %.0f, %s %.0f%n",
                    summary,
                    inFlightAtFence,
                    sentBeforeFence,
                    sentInTxn1.get(),
                    aErrors.stream()
                            .map(e -> e.getClass().getSimpleName())
                            .distinct()
                            .toList(),
                    inflightMax,
                    Transactions.DEFERRED_DISPATCH_TOTAL,
                    deferred);
            assertEquals(2L * RECORDS, ledger.committedRecords(), "A's first and B's transaction committed");
            assertEquals(
                    0.0, KpipeJmx.kpipe(cluster.node(1), "plugin-fault-total"), "no throwable caught in kpipe code");
            assertTrue(inflightMax >= 2, "A's transactional produce requests were pipelined: " + inflightMax);
        } finally {
            stop.set(true);
            if (sender != null) {
                sender.join(AWAIT.toMillis());
            }
            a.close(Duration.ZERO);
        }
    }

    private static void sendAll(
            KafkaProducer<byte[], byte[]> p,
            int producer,
            int txn,
            int[] seq,
            TxnLedger ledger,
            List<Throwable> errors) {
        for (int i = 0; i < RECORDS; i++) {
            int partition = i % PARTITIONS;
            int s = seq[partition]++;
            p.send(
                    new ProducerRecord<>(TOPIC, partition, null, TxnLedger.value(producer, partition, s, txn)),
                    (md, e) -> {
                        if (e != null) {
                            errors.add(e);
                        }
                    });
            ledger.sent(producer, partition, s, txn);
        }
    }

    /** @return whether {@code t} or a cause of it is the fencing error */
    private static boolean isFencing(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ProducerFencedException || c instanceof InvalidProducerEpochException) {
                return true;
            }
        }
        return false;
    }

    private static void awaitTrue(Cluster cluster, java.util.function.BooleanSupplier condition, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + AWAIT.toSeconds() + " s: " + what + "; node 1's connection dump:\n"
                        + Transactions.connectionDump(cluster.node(1)));
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
    }

    /** The producer's own metrics. */
    static final class LoadMetrics {
        private LoadMetrics() {}

        /** @return {@code producer-metrics} {@code requests-in-flight}: requests sent and not answered, all nodes */
        static double requestsInFlight(KafkaProducer<?, ?> p) {
            return p.metrics().entrySet().stream()
                    .filter(e -> e.getKey().group().equals("producer-metrics")
                            && e.getKey().name().equals("requests-in-flight"))
                    .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                    .findFirst()
                    .orElse(0);
        }
    }
}
