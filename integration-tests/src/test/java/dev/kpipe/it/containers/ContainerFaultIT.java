// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.KpipeLog;
import dev.kpipe.it.reliability.KpipeGauges;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Real network partitions and freezes of brokers in containers: a 3-broker KRaft cluster (combined nodes) on a Docker
 * network of its own, replication factor 3, {@code min.insync.replicas=2}, two idempotent producers and one
 * transactional producer writing to 12 partitions ({@link FaultLoad}). Mid-run:
 *
 * <ol>
 *   <li><b>partition</b>: the leader of most partitions is cut off the network ({@code docker network disconnect})
 *       for {@value #PARTITION_SECONDS} s, longer than {@code replica.lag.time.max.ms} ({@value #REPLICA_LAG_MS} ms)
 *       and the broker session timeout ({@value #SESSION_TIMEOUT_MS} ms), then connected again;
 *   <li><b>freeze</b>: the leader of most partitions then is frozen ({@code docker pause}) for {@value
 *       #FREEZE_SECONDS} s, longer than the session timeout, then thawed.
 * </ol>
 *
 * <p>Each fault must move leadership off the broker while it lasts, and the cluster must be fully in sync after it.
 * Afterwards every acknowledged record is read back exactly once, at its acknowledged offset, in per-partition order;
 * with {@code read_committed} exactly the committed transactions' records (a transaction whose commit failed without a
 * timeout, its outcome unknown to the client, all or nothing); no producer error is fatal, except that the
 * transactional producer is replaced when it reaches a fatal state, as an exactly-once application does (counted,
 * printed). With kpipe, the producers' connections are pipelined before and after each fault (kpipe's {@code
 * pipelined-request-total} grows in each phase), kpipe's live-state gauges return to 0 on every broker and no broker
 * logged a WARN or ERROR about kpipe. The same run on stock brokers (no kpipe jar) comes first, and both are printed
 * side by side.
 *
 * <p>Skipped with one line where Docker or the image cannot be had ({@link DockerEngine}).
 */
@Tag("containers")
@ExtendWith(DockerEngine.class)
class ContainerFaultIT {
    static final int PARTITION_SECONDS = 20;
    static final int FREEZE_SECONDS = 15;
    static final int REPLICA_LAG_MS = 10_000;
    static final int SESSION_TIMEOUT_MS = 9_000;
    private static final int PARTITIONS = 12;
    private static final int PRODUCERS = 2;
    private static final int RATE = 400;
    private static final int ACKS_PER_PHASE = 4_000;

    @Test
    void acknowledgedRecordsSurvivePartitionAndFreezeOnStockAndKpipe() throws Exception {
        Path logs = ContainerLogs.folderFor(ContainerFaultIT.class);
        Map<String, String> stock = run(false, logs);
        Map<String, String> kpipe = run(true, logs);
        System.out.printf(
                "kpipe-it: container faults, 3 brokers, RF 3, min ISR 2, %d partitions, %d idempotent"
                        + " producers x %d records/s + 1 transactional; partition %d s, freeze %d s (logs %s)%n",
                PARTITIONS, PRODUCERS, RATE, PARTITION_SECONDS, FREEZE_SECONDS, logs);
        System.out.printf("kpipe-it:   %-34s %-40s %s%n", "", "stock", "kpipe");
        for (String k : kpipe.keySet()) {
            System.out.printf("kpipe-it:   %-34s %-40s %s%n", k, stock.getOrDefault(k, "-"), kpipe.get(k));
        }
    }

    /** One run of the scenario on a fresh cluster; returns its numbers by name, in print order. */
    private static Map<String, String> run(boolean withKpipe, Path logs) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        // The same names on both runs' (fresh) clusters, and none with "kpipe" in it: the log check below looks for
        // WARN and ERROR lines that name kpipe.
        String topic = "fault-load";
        String txTopic = "fault-load-tx";
        long t0 = System.nanoTime();
        try (ContainerCluster cluster =
                        new ContainerCluster(3, withKpipe, brokerSettings(), logs, Duration.ofMinutes(5));
                Admin admin = Admin.create(adminConfig(cluster))) {
            out.put("cluster start (s)", Long.toString(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)));
            for (String t : List.of(topic, txTopic)) {
                admin.createTopics(List.of(
                                new NewTopic(t, PARTITIONS, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
                        .all()
                        .get(60, TimeUnit.SECONDS);
                cluster.awaitFullIsr(admin, t, Duration.ofMinutes(2));
            }
            FaultLoad load = new FaultLoad(cluster.clientConfig(), topic, txTopic, PARTITIONS, PRODUCERS, RATE);
            List<Double> pipelined = new ArrayList<>();
            awaitAcks(load, ACKS_PER_PHASE);
            int warmEnd = load.second();
            pipelined.add(pipelined(cluster, withKpipe));
            out.put("rate before faults (acks/s)", Long.toString(load.rateAndStall(1, warmEnd)[0]));

            int cut = mostLeader(admin, topic);
            int partStart = load.second();
            cluster.disconnect(cut);
            long moved = awaitNoLeadership(admin, topic, cut, Duration.ofSeconds(PARTITION_SECONDS + 60));
            holdUntil(partStart, PARTITION_SECONDS, load);
            cluster.reconnect(cut);
            long healed = cluster.awaitFullIsr(admin, topic, Duration.ofMinutes(3));
            int partEnd = load.second();
            awaitAcks(load, load.ackedCount() + ACKS_PER_PHASE);
            pipelined.add(pipelined(cluster, withKpipe));
            long[] partRate = load.rateAndStall(partStart, partEnd);
            out.put("partition: broker cut off", "kafka-" + cut);
            out.put("partition: leaders moved after (ms)", Long.toString(moved));
            out.put("partition: ISR full after heal (ms)", Long.toString(healed));
            out.put("partition: rate / longest stall", partRate[0] + " acks/s / " + partRate[1] + " s");

            int frozen = mostLeader(admin, topic);
            int freezeStart = load.second();
            cluster.pause(frozen);
            long frozenMoved = awaitNoLeadership(admin, topic, frozen, Duration.ofSeconds(FREEZE_SECONDS + 60));
            holdUntil(freezeStart, FREEZE_SECONDS, load);
            cluster.unpause(frozen);
            long thawed = cluster.awaitFullIsr(admin, topic, Duration.ofMinutes(3));
            int freezeEnd = load.second();
            awaitAcks(load, load.ackedCount() + ACKS_PER_PHASE);
            int end = load.second();
            pipelined.add(pipelined(cluster, withKpipe));
            long[] freezeRate = load.rateAndStall(freezeStart, freezeEnd);
            out.put("freeze: broker paused", "kafka-" + frozen);
            out.put("freeze: leaders moved after (ms)", Long.toString(frozenMoved));
            out.put("freeze: ISR full after thaw (ms)", Long.toString(thawed));
            out.put("freeze: rate / longest stall", freezeRate[0] + " acks/s / " + freezeRate[1] + " s");
            out.put("rate after faults (acks/s)", Long.toString(load.rateAndStall(freezeEnd, end)[0]));

            load.stop(Duration.ofMinutes(4));
            assertEquals(List.of(), load.fatal(), "no producer error is fatal");
            long[] read = load.verify(Duration.ofMinutes(3));
            out.put("acknowledged / read back", load.ackedCount() + " / " + read[0]);
            out.put("committed tx records / read back", load.committedCount() + " / " + read[1]);
            out.put(
                    "tx producers replaced / outcome unknown",
                    load.replacedProducers() + " / " + load.uncertainTransactions());
            out.put(
                    "producer errors (non-fatal)",
                    load.errors().isEmpty() ? "none" : load.errors().toString());
            assertTrue(load.committedCount() > 0, "transactions committed");
            if (withKpipe) {
                assertTrue(pipelined.get(0) > 0, "pipelined before the faults: " + pipelined);
                assertTrue(pipelined.get(1) > pipelined.get(0), "pipelined after the partition: " + pipelined);
                assertTrue(pipelined.get(2) > pipelined.get(1), "pipelined after the freeze: " + pipelined);
                double maxInflight = 0;
                for (int id = 1; id <= cluster.size(); id++) {
                    maxInflight = Math.max(
                            maxInflight,
                            cluster.kpipeMetrics(id, List.of("inflight-requests-per-connection-max"))
                                    .get("inflight-requests-per-connection-max"));
                    awaitGaugesZero(cluster, id, Duration.ofSeconds(60));
                }
                assertTrue(maxInflight > 1, "a connection had more than one request in flight: " + maxInflight);
                for (int id = 1; id <= cluster.size(); id++) {
                    String log = cluster.node(id).getLogs();
                    assertEquals(1, KpipeLog.startedLines(log).size(), "one kpipe start line on kafka-" + id);
                    List<KpipeLog.LogRecord> warnings = KpipeLog.records(log).stream()
                            .filter(r -> r.warnOrAbove() && r.aboutKpipe())
                            .toList();
                    assertEquals(
                            List.of(), warnings, "no WARN or ERROR about kpipe on kafka-" + id + " through the faults");
                }
                out.put(
                        "pipelined requests (before/partition/freeze)",
                        String.format("%.0f / %.0f / %.0f", pipelined.get(0), pipelined.get(1), pipelined.get(2)));
                out.put("max in flight per connection", String.format("%.0f", maxInflight));
                out.put("kpipe gauges after the run", "0 on every broker");
                out.put("kpipe WARN/ERROR lines", "none");
            }
            out.put("run (s)", Long.toString(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)));
        }
        return out;
    }

    /**
     * @return admin settings that give up on a frozen or cut-off broker within 5 s (default 30 s), so that the times
     *     measured here are the cluster's, not the admin client's request timeout
     */
    private static Map<String, Object> adminConfig(ContainerCluster cluster) {
        Map<String, Object> c = cluster.clientConfig();
        c.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        return c;
    }

    /** The brokers' settings (as the image's {@code KAFKA_*} variables). */
    private static Map<String, String> brokerSettings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("KAFKA_DEFAULT_REPLICATION_FACTOR", "3");
        s.put("KAFKA_MIN_INSYNC_REPLICAS", "2");
        s.put("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "3");
        s.put("KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS", "3");
        s.put("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "3");
        s.put("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "2");
        s.put("KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS", "3");
        s.put("KAFKA_REPLICA_LAG_TIME_MAX_MS", Integer.toString(REPLICA_LAG_MS));
        s.put("KAFKA_BROKER_SESSION_TIMEOUT_MS", Integer.toString(SESSION_TIMEOUT_MS));
        s.put("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
        s.put("KAFKA_HEAP_OPTS", "-Xms320m -Xmx320m");
        return s;
    }

    private static int mostLeader(Admin admin, String topic) throws Exception {
        return ContainerCluster.leaderCounts(admin, topic).entrySet().stream()
                .max(Map.Entry.comparingByValue())
                .orElseThrow()
                .getKey();
    }

    /** @return ms until no partition of {@code topic} names {@code node} as its leader */
    private static long awaitNoLeadership(Admin admin, String topic, int node, Duration timeout) throws Exception {
        long t0 = System.nanoTime();
        await(
                () -> {
                    try {
                        return ContainerCluster.leaderCounts(admin, topic).getOrDefault(node, 0) == 0;
                    } catch (Exception e) {
                        return false;
                    }
                },
                timeout,
                () -> "leadership moved off kafka-" + node);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    private static void awaitAcks(FaultLoad load, long count) throws InterruptedException {
        await(
                () -> load.ackedCount() >= count || !load.fatal().isEmpty(),
                Duration.ofMinutes(3),
                () -> count + " records acknowledged (have " + load.ackedCount() + ", errors " + load.errors() + ")");
        assertEquals(List.of(), load.fatal(), "no producer error is fatal");
    }

    /** Keeps a fault on until {@code seconds} after {@code startSecond} of the load's clock: the fault's length. */
    private static void holdUntil(int startSecond, int seconds, FaultLoad load) throws InterruptedException {
        while (load.second() < startSecond + seconds) {
            TimeUnit.MILLISECONDS.sleep(200); // the fault lasts this long by design
        }
    }

    private static double pipelined(ContainerCluster cluster, boolean withKpipe) throws Exception {
        if (!withKpipe) {
            return 0;
        }
        double sum = 0;
        for (int id = 1; id <= cluster.size(); id++) {
            sum += cluster.kpipeMetrics(id, List.of("pipelined-request-total")).get("pipelined-request-total");
        }
        return sum;
    }

    private static void awaitGaugesZero(ContainerCluster cluster, int id, Duration timeout) throws Exception {
        AtomicReference<Object> last = new AtomicReference<>("unread");
        await(
                () -> {
                    try {
                        Map<String, Double> m = cluster.kpipeMetrics(id, KpipeGauges.LIVE_STATE);
                        last.set(m);
                        return m.values().stream().allMatch(v -> v == 0.0);
                    } catch (Exception e) {
                        last.set(e);
                        return false;
                    }
                },
                timeout,
                () -> "kpipe gauges of kafka-" + id + " at 0 (last " + last.get() + ")");
    }

    private static void await(BooleanSupplier condition, Duration timeout, Supplier<String> what)
            throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError(what.get() + ": not within " + timeout.toSeconds() + " s");
            }
            TimeUnit.MILLISECONDS.sleep(250); // poll interval
        }
    }
}
