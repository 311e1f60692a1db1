// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/**
 * The transaction coordinator's broker killed (SIGKILL) and restarted while transactional producers run: 3 nodes,
 * {@code __transaction_state} with replication factor 3 and {@code min.isr} 2 (so the coordinator moves to another
 * broker), a topic of 6 partitions with replication factor 3, and two transactional producers (acks=all, 5 in
 * flight) committing, and on a seeded draw aborting, transactions of 60 records over 3 partitions each, with slow
 * followers (brokers 2 and 3 delay their fetches). Their {@code transactional.id}s are chosen so that broker 2 or 3
 * (node 1 is the harness's only controller) coordinates both.
 *
 * <p>The producers recover as an exactly-once application does: a retriable error aborts the transaction and the
 * next one begins; a timed-out commit is retried; a producer that cannot abort is replaced ({@link TxnWriter}).
 * Each keeps committing after the kill (the coordinator moved) and after the restart. Read back with {@code
 * read_committed}: every committed transaction's records exactly once (count per transaction as the producer saw
 * it), per producer and partition in order, nothing of an aborted one, a transaction of unknown outcome all or
 * nothing.
 */
@KafkaCluster(
        nodes = 3,
        brokerConfig = {
            "broker.heartbeat.interval.ms=500",
            "broker.session.timeout.ms=4000",
            "transaction.state.log.replication.factor=3",
            "transaction.state.log.min.isr=2",
            "num.io.threads=8"
        },
        nodeConfig = {
            "2:replica.fetch.min.bytes=10000000",
            "2:replica.fetch.wait.max.ms=50",
            "3:replica.fetch.min.bytes=10000000",
            "3:replica.fetch.wait.max.ms=50"
        })
class CoordinatorFailoverIT {
    private static final String TOPIC = "txn-coordinator-failover";
    private static final String TXN_STATE = "__transaction_state";
    /** The harness's {@code transaction.state.log.num.partitions}. */
    private static final int TXN_STATE_PARTITIONS = 5;

    private static final int PARTITIONS = 6;
    private static final int WRITERS = 2;
    private static final Duration AWAIT = Duration.ofSeconds(60);

    @Test
    void committedTransactionsSurviveACoordinatorKillOnceAndInOrder(Cluster cluster) throws Exception {
        Map<Integer, List<Integer>> assignment = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(
                    p,
                    switch (p % 3) {
                        case 0 -> List.of(2, 3, 1);
                        case 1 -> List.of(3, 1, 2);
                        default -> List.of(1, 2, 3);
                    });
        }
        cluster.createTopics(
                List.of(new NewTopic(TOPIC, assignment).configs(Map.of("min.insync.replicas", "2"))), AWAIT);
        // __transaction_state is created on the first FindCoordinator for a transactional id.
        try (KafkaProducer<byte[], byte[]> probe = new KafkaProducer<>(
                Transactions.producerConfig(cluster, "coordinator-probe", "coordinator-probe"),
                new ByteArraySerializer(),
                new ByteArraySerializer())) {
            probe.initTransactions();
        }
        awaitPartitions(
                cluster,
                TXN_STATE,
                TXN_STATE_PARTITIONS,
                "full ISR",
                d -> d.isr().size() == 3);
        awaitPartitions(cluster, TOPIC, PARTITIONS, "full ISR", d -> d.isr().size() == 3);

        Map<Integer, TopicPartitionInfo> txnState = describe(cluster, TXN_STATE);
        int victim = txnState.values().stream()
                .map(d -> d.leader().id())
                .filter(id -> id != 1)
                .sorted()
                .findFirst()
                .orElseThrow(
                        () -> new AssertionError("node 1 leads every partition of " + TXN_STATE + ": " + txnState));
        List<String> ids = new ArrayList<>();
        for (int n = 0; ids.size() < WRITERS; n++) {
            String id = "coordinator-failover-" + n;
            if (txnState.get(Utils.abs(id.hashCode()) % TXN_STATE_PARTITIONS)
                            .leader()
                            .id()
                    == victim) {
                ids.add(id);
            }
        }

        TxnLedger ledger = new TxnLedger();
        List<TxnWriter> writers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        List<String> timeline = new ArrayList<>();
        long t0 = System.nanoTime();
        try {
            for (int i = 0; i < WRITERS; i++) {
                Map<String, Object> config = Transactions.producerConfig(cluster, ids.get(i), ids.get(i));
                config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
                config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
                config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
                TxnWriter w = new TxnWriter(config, i, TOPIC, PARTITIONS, 3, 60, 0.2, 0, 15_100L + i, ledger);
                writers.add(w);
                Thread t = new Thread(w, "coordinator-failover-writer-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            awaitCommits(cluster, writers, 5);
            for (String id : ids) {
                assertEquals(victim, Transactions.coordinatorOf(cluster, id), id + " coordinated by broker " + victim);
            }
            KafkaNode node = cluster.node(victim);
            double pipelined = KpipeJmx.kpipe(node, "pipelined-request-total");
            double deferredBeforeKill = 0;
            for (int n = 1; n <= 3; n++) {
                deferredBeforeKill += KpipeJmx.kpipe(cluster.node(n), Transactions.DEFERRED_DISPATCH_TOTAL);
            }
            assertTrue(deferredBeforeKill > 0, "the producers' transactional produce was pipelined before the kill");
            node.kill();
            timeline.add(String.format(
                    "%.1fs kill -9 broker %d, coordinator of %s (%d commits so far; %.0f requests"
                            + " pipelined on it)",
                    secondsSince(t0), victim, ids, commits(writers), pipelined));
            awaitCommits(cluster, writers, 5);
            for (String id : ids) {
                assertNotEquals(victim, Transactions.coordinatorOf(cluster, id), id + "'s coordinator moved");
            }
            timeline.add(String.format(
                    "%.1fs every producer committed 5 more; coordinators now %s",
                    secondsSince(t0), coordinators(cluster, ids)));
            node.start();
            awaitPartitions(
                    cluster,
                    TOPIC,
                    PARTITIONS,
                    "broker " + victim + " back in every ISR",
                    d -> d.isr().size() == 3);
            awaitPartitions(
                    cluster,
                    TXN_STATE,
                    TXN_STATE_PARTITIONS,
                    "broker " + victim + " back in every ISR",
                    d -> d.isr().size() == 3);
            timeline.add(String.format("%.1fs broker %d restarted and back in every ISR", secondsSince(t0), victim));
            awaitCommits(cluster, writers, 3);
            timeline.add(String.format("%.1fs every producer committed 3 more", secondsSince(t0)));
        } finally {
            writers.forEach(w -> w.stop.set(true));
            for (Thread t : threads) {
                t.join(AWAIT.toMillis());
            }
        }
        for (TxnWriter w : writers) {
            assertNull(w.failure.get(), () -> w.transactionalId() + " gave up; errors " + w.errors);
        }

        Transactions.awaitSettled(cluster, TOPIC, PARTITIONS, AWAIT);
        String summary = Transactions.readCommittedAndCheck(cluster, TOPIC, ledger, AWAIT);
        Map<String, Integer> errors = new TreeMap<>();
        writers.forEach(w -> w.errors.forEach((k, v) -> errors.merge(k, v, Integer::sum)));
        System.out.printf(
                "CoordinatorFailoverIT: %s; producer errors %s, producers replaced %d; %.1f s%n  %s%n",
                summary,
                errors,
                writers.stream().mapToInt(w -> w.replacedProducers.get()).sum(),
                secondsSince(t0),
                String.join("\n  ", timeline));
        assertTrue(
                ledger.count(-1, Outcome.COMMITTED) >= WRITERS * 13,
                "each producer committed before, during and" + " after the outage");
        for (KafkaNode n : cluster.nodes()) {
            assertEquals(0.0, KpipeJmx.kpipe(n, "plugin-fault-total"), "no throwable caught in kpipe code on " + n);
        }
    }

    private static String dumps(Cluster cluster) {
        StringBuilder sb = new StringBuilder();
        for (KafkaNode n : cluster.nodes()) {
            if (n.isRunning()) {
                sb.append("node ")
                        .append(n.id())
                        .append(":\n")
                        .append(Transactions.connectionDump(n))
                        .append('\n');
            }
        }
        return sb.toString();
    }

    private static int commits(List<TxnWriter> writers) {
        return writers.stream().mapToInt(w -> w.commits.get()).sum();
    }

    private static Map<String, Object> coordinators(Cluster cluster, List<String> ids) throws Exception {
        Map<String, Object> m = new TreeMap<>();
        for (String id : ids) {
            m.put(id, Transactions.coordinatorOf(cluster, id));
        }
        return m;
    }

    /** Waits until every writer has committed {@code more} transactions beyond its count now. */
    private static void awaitCommits(Cluster cluster, List<TxnWriter> writers, int more) throws InterruptedException {
        int[] target = writers.stream().mapToInt(w -> w.commits.get() + more).toArray();
        long deadline = System.nanoTime() + AWAIT.toNanos();
        for (int i = 0; i < writers.size(); i++) {
            TxnWriter w = writers.get(i);
            while (w.commits.get() < target[i]) {
                if (w.failure.get() != null) {
                    fail(w.transactionalId() + " gave up; errors " + w.errors, w.failure.get());
                }
                if (System.nanoTime() > deadline) {
                    fail(w.transactionalId() + " committed " + w.commits.get() + " transactions, not " + target[i]
                            + ", within " + AWAIT.toSeconds() + " s; errors " + w.errors + "; connection dumps:\n"
                            + dumps(cluster));
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    private static Map<Integer, TopicPartitionInfo> describe(Cluster cluster, String topic) throws Exception {
        Map<Integer, TopicPartitionInfo> m = new TreeMap<>();
        cluster.admin()
                .describeTopics(List.of(topic))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(topic)
                .partitions()
                .forEach(p -> m.put(p.partition(), p));
        return m;
    }

    private static void awaitPartitions(
            Cluster cluster, String topic, int partitions, String what, Predicate<TopicPartitionInfo> ok)
            throws Exception {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        Object last = null;
        while (true) {
            try {
                Map<Integer, TopicPartitionInfo> parts = describe(cluster, topic);
                if (parts.size() == partitions
                        && parts.values().stream().allMatch(p -> p.leader() != null && ok.test(p))) {
                    return;
                }
                last = parts.values();
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e; // not created yet, or a broker just died or restarted: ask again
            }
            if (System.nanoTime() > deadline) {
                fail(topic + ": not reached within " + AWAIT.toSeconds() + " s: " + what + "; last: " + last);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    private static double secondsSince(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }
}
