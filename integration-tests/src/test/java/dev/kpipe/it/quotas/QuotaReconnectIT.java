// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.quotas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A client over its produce quota that never reads its responses and connects anew whenever the broker stops reading
 * it ({@link ReconnectingProducer}, issue #33's S9 slow reader), on a stock and a kpipe broker with the same quota on
 * its client id, at the same time: stock reads one request of each new connection and mutes it for its throttle time
 * (KIP-219); kpipe puts a new connection of a client it saw throttled on probation (one request in at a time), so the
 * bytes appended (end offset x record size) stay within {@link #MAX_RATIO} of stock's. Without probation kpipe let such
 * a client append several times stock's (up to 16 requests per new connection).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QuotaReconnectIT {

    private static final String CLIENT_ID = "kpipe-it-slow-reader";
    private static final double QUOTA = 256 * 1024; // producer_byte_rate, bytes/s
    private static final int VALUE_SIZE = 31 * 1024;
    private static final int THREADS = 4;
    private static final Duration RUN = Duration.ofSeconds(Integer.getInteger("kpipe.it.reconnect.s", 15));
    private static final Duration STALL = Duration.ofMillis(200);
    /**
     * The appended bytes compared are those after this warm-up: before its first throttled response a client's first
     * connections pipeline on kpipe (up to 16 requests each, once), where stock reads one.
     */
    private static final Duration WARMUP = Duration.ofSeconds(3);
    /** kpipe's appended bytes over stock's, at most (see the class comment for what was measured). */
    private static final double MAX_RATIO = 1.3;

    private Cluster stock;
    private Cluster kpipe;
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @BeforeAll
    void startClusters() throws Exception {
        Future<Cluster> s = pool.submit(() -> Cluster.start(
                spec("QuotaReconnectIT-stock").installPlugin(false).build()));
        Future<Cluster> k =
                pool.submit(() -> Cluster.start(spec("QuotaReconnectIT-kpipe").build()));
        try {
            stock = s.get();
        } finally {
            kpipe = k.get();
        }
    }

    /**
     * Two nodes; node 2 follows with {@code replica.fetch.min.bytes} far above what is produced and {@code
     * replica.fetch.wait.max.ms=50}, so an acks=all produce waits up to 50 ms for it in the purgatory, and kpipe reads
     * ahead on a connection before its first (throttled) response comes back, as with the real followers of S9.
     */
    private static ClusterSpec.Builder spec(String name) {
        return ClusterSpec.builder()
                .name(name)
                .nodes(2)
                .nodeConfig(2, "replica.fetch.min.bytes", "10000000")
                .nodeConfig(2, "replica.fetch.wait.max.ms", "50");
    }

    @AfterAll
    void stopClusters() {
        pool.shutdownNow();
        for (Cluster c : new Cluster[] {kpipe, stock}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void aThrottledClientThatReconnectsAppendsNoMoreOnKpipeThanOnStock() throws Exception {
        String topic = "q-reconnect";
        Map<String, String> entity = Map.of(ClientQuotaEntity.CLIENT_ID, CLIENT_ID);
        for (Cluster c : List.of(stock, kpipe)) {
            c.createTopics(
                    List.of(new NewTopic(topic, Map.of(0, List.of(1, 2)))), Duration.ofSeconds(60)); // leader: node 1
            QuotaLoad.quota(c, entity, "producer_byte_rate", QUOTA);
        }
        Future<ReconnectingProducer.Result> onStock = pool.submit(() ->
                ReconnectingProducer.run(CLIENT_ID, stock.node(1).port(), topic, RUN, THREADS, VALUE_SIZE, STALL));
        Future<ReconnectingProducer.Result> onKpipe = pool.submit(() ->
                ReconnectingProducer.run(CLIENT_ID, kpipe.node(1).port(), topic, RUN, THREADS, VALUE_SIZE, STALL));
        TimeUnit.MILLISECONDS.sleep(WARMUP.toMillis()); // a point in time to measure from, not a condition
        long stockWarm = endOffset(stock, topic);
        long kpipeWarm = endOffset(kpipe, topic);
        ReconnectingProducer.Result rs = onStock.get();
        ReconnectingProducer.Result rk = onKpipe.get();
        long stockTotal = settledEndOffset(stock, topic);
        long kpipeTotal = settledEndOffset(kpipe, topic);
        long stockRecords = stockTotal - stockWarm;
        long kpipeRecords = kpipeTotal - kpipeWarm;
        double ratio = (double) kpipeRecords / stockRecords;
        double seconds = (RUN.toMillis() - WARMUP.toMillis()) / 1000.0;
        System.out.printf(
                "QuotaReconnectIT: quota %.0f KiB/s, %d threads, %.0f s after a %d s warm-up: stock %d connections,"
                        + " %d requests written, %d appended (%.0f KiB/s); kpipe %d connections, %d written, %d appended"
                        + " (%.0f KiB/s); kpipe/stock appended %.2f (with the warm-up %.2f: %d vs %d);"
                        + " kpipe wait-client-throttled-total %.0f%n",
                QUOTA / 1024,
                THREADS,
                seconds,
                WARMUP.toSeconds(),
                rs.connections(),
                rs.requests(),
                stockRecords,
                stockRecords * (VALUE_SIZE / 1024.0) / seconds,
                rk.connections(),
                rk.requests(),
                kpipeRecords,
                kpipeRecords * (VALUE_SIZE / 1024.0) / seconds,
                ratio,
                (double) kpipeTotal / stockTotal,
                kpipeTotal,
                stockTotal,
                KpipeJmx.kpipe(kpipe.node(1), "wait-client-throttled-total"));
        assertTrue(stockRecords > 0 && rs.connections() > THREADS, "stock: the client reconnected and appended");
        assertTrue(
                ratio <= MAX_RATIO,
                "kpipe appended " + kpipeRecords + " records, stock " + stockRecords + ": ratio " + ratio);
        assertTrue(KpipeJmx.kpipe(kpipe.node(1), "wait-client-throttled-total") > 0, "probation waits counted");
        assertEquals(0.0, KpipeJmx.kpipe(kpipe.node(1), "plugin-fault-total"), "kpipe plugin-fault-total");
        for (Cluster c : List.of(stock, kpipe)) {
            assertEquals(List.of(), QuotaLoad.illegalStates(c.node(1)), "broker log");
        }
    }

    private static long endOffset(Cluster c, String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        return c.admin()
                .listOffsets(Map.of(tp, OffsetSpec.latest()))
                .partitionResult(tp)
                .get(30, TimeUnit.SECONDS)
                .offset();
    }

    /** @return the partition's end offset once it stopped moving (appends of requests read before the end) */
    private static long settledEndOffset(Cluster c, String topic) throws Exception {
        long last = -1;
        for (int i = 0; i < 50; i++) {
            long now = endOffset(c, topic);
            if (now == last) {
                return now;
            }
            last = now;
            TimeUnit.MILLISECONDS.sleep(500);
        }
        return last;
    }
}
