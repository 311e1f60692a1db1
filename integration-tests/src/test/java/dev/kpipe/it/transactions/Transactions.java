// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Helpers of the transactional-produce integration tests: producer settings, settling, read-back, JMX. */
public final class Transactions {
    /** kpipe's count of produce requests whose dispatch waited for an asynchronous (post-verification) append. */
    public static final String DEFERRED_DISPATCH_TOTAL = "deferred-dispatch-total";

    private static final Set<TransactionState> SETTLED =
            Set.of(TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT, TransactionState.EMPTY);

    private Transactions() {}

    /**
     * @return an exactly-once producer's settings: acks=all, idempotence, 5 in flight, linger 0, small batches so one
     *     transaction spans several produce requests per connection
     */
    public static Map<String, Object> producerConfig(Cluster cluster, String clientId, String transactionalId) {
        Map<String, Object> p = new HashMap<>(cluster.clientConfig());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        if (transactionalId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1024);
        return p;
    }

    /**
     * Waits until no transaction is in progress anywhere and every partition's last stable offset equals its high
     * watermark: every commit or abort marker written and replicated (a commit returns once the coordinator logged
     * it; its markers follow). Polls every 100 ms.
     *
     * @throws AssertionError naming what was still pending after {@code timeout}
     */
    public static void awaitSettled(Cluster cluster, String topic, int partitions, Duration timeout)
            throws InterruptedException {
        Admin admin = cluster.admin();
        List<TopicPartition> tps = IntStream.range(0, partitions)
                .mapToObj(p -> new TopicPartition(topic, p))
                .toList();
        long deadline = System.nanoTime() + timeout.toNanos();
        Object last = null;
        while (true) {
            try {
                List<String> ids = admin.listTransactions().all().get(10, TimeUnit.SECONDS).stream()
                        .map(TransactionListing::transactionalId)
                        .toList();
                Map<String, TransactionState> open = new TreeMap<>();
                if (!ids.isEmpty()) {
                    for (Map.Entry<String, TransactionDescription> e : admin.describeTransactions(ids)
                            .all()
                            .get(10, TimeUnit.SECONDS)
                            .entrySet()) {
                        if (!SETTLED.contains(e.getValue().state())) {
                            open.put(e.getKey(), e.getValue().state());
                        }
                    }
                }
                Map<TopicPartition, OffsetSpec> latest =
                        tps.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()));
                Map<TopicPartition, Long> hw = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
                admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS).forEach((tp, r) -> hw.put(tp, r.offset()));
                Map<TopicPartition, Long> lso = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
                admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                        .all()
                        .get(10, TimeUnit.SECONDS)
                        .forEach((tp, r) -> lso.put(tp, r.offset()));
                if (open.isEmpty() && hw.equals(lso)) {
                    return;
                }
                last = "open transactions " + open + ", high watermarks " + hw + ", last stable offsets " + lso;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e; // a broker restarting, a coordinator moving: ask again
            }
            if (System.nanoTime() > deadline) {
                fail("transactions not settled within " + timeout.toSeconds() + " s: " + last);
            }
            Thread.sleep(100);
        }
    }

    /**
     * Reads {@code topic} with {@code isolation.level=read_committed} and checks it against {@code ledger}.
     *
     * @return the check's summary
     */
    public static String readCommittedAndCheck(Cluster cluster, String topic, TxnLedger ledger, Duration timeout) {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "txn-verifier");
        TxnLedger.Check check = ledger.check();
        RecordReadBack.readToEnd(
                props, topic, new ByteArrayDeserializer(), new ByteArrayDeserializer(), timeout, check::accept);
        return check.finish();
    }

    /** @return the id of the broker that coordinates {@code transactionalId} now (DescribeTransactions) */
    public static int coordinatorOf(Cluster cluster, String transactionalId) throws Exception {
        return cluster.admin()
                .describeTransactions(List.of(transactionalId))
                .description(transactionalId)
                .get(10, TimeUnit.SECONDS)
                .coordinatorId();
    }

    /**
     * @return kpipe's connection dump of {@code node} ({@code kafka.server:type=kpipe-connections}, see
     *     docs/monitoring.md), or what reading it threw: for failure messages
     */
    public static String connectionDump(KafkaNode node) {
        try {
            return (String)
                    node.jmx().getAttribute(new ObjectName("kafka.server:type=kpipe-connections"), "connection-dump");
        } catch (Exception e) {
            return "(no connection dump: " + e + ")";
        }
    }
}
