// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.ClusterSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An offset-commit scenario on the slow-ack cluster (issue #22): S6, one consumer calling {@code commitAsync} after
 * every poll, or S7, a Kafka Streams {@code exactly_once_v2} map application with {@code commit.interval.ms=100}.
 *
 * <p>The cluster: 2 KRaft nodes, both fetching as S1's follower does ({@code replica.fetch.min.bytes} far above what is
 * written, {@code replica.fetch.wait.max.ms=W}), so whichever node follows a partition acknowledges it about every W.
 * The offsets topic and the transaction log have one partition each, replicated to both nodes
 * ({@code offsets.commit.required.acks=-1}, Kafka's default; the transaction log's {@code min.isr} 2), and
 * {@link CommitRounds#leadOnNodeOne} moves their leadership to node 1, so the group coordinator, the transaction
 * coordinator and the data's leader are the same broker, as when one broker serves a small application. Data topics:
 * S6's and S7's input have one replica on node 1 (so they are readable at once: only the commits wait for acks); S7's
 * output is on [1,2] with {@code min.insync.replicas=2}, as S1's topic.
 *
 * <p>Immutable.
 *
 * @param id {@code S6} or {@code S7}
 * @param windowMs W, every node's {@code replica.fetch.wait.max.ms}
 * @param sides the sides in the order of {@link RoundOrder}: stock, kpipe, and kpipe-excl if wanted
 * @param addPartitionsRetryMaxMs S7: every broker's {@code add.partitions.to.txn.retry.backoff.max.ms} (all sides), or
 *     0 for Kafka's default (100 ms); {@code --s5-add-partitions-retry-max-ms}
 */
record CommitScenario(String id, int windowMs, List<CommitSide> sides, int addPartitionsRetryMaxMs) {

    /** Input topic of S6 and S7: 1 partition, 1 replica on node 1. */
    static final String INPUT_TOPIC = "bench-commits-in";

    /** Output topic of S7: 1 partition on [1,2], {@code min.insync.replicas=2}. */
    static final String OUTPUT_TOPIC = "bench-commits-out";

    /** Record value size of the fed and pre-filled input, bytes. */
    static final int RECORD_BYTES = 100;

    /** S7's {@code commit.interval.ms}. */
    static final int S7_COMMIT_INTERVAL_MS = 100;

    /** S6 target: commits/s kpipe/stock at least this (median of round pairs). */
    static final double S6_MIN_COMMITS_RATIO = 3.0;

    /** S7 target: records/s kpipe/kpipe-excl at least this (median of round pairs). */
    static final double S7_MIN_RECORDS_RATIO_VS_EXCL = 1.25;

    /**
     * @param id {@code S6} or {@code S7}
     * @param windowMs W, ms
     * @param o the options ({@link CommitOptions#excl})
     * @return the scenario
     * @throws IllegalArgumentException if the id is neither
     */
    static CommitScenario of(String id, int windowMs, BenchOptions o) {
        if (!id.equals("S6") && !id.equals("S7")) {
            throw new IllegalArgumentException("not an offset-commit scenario: " + id);
        }
        List<CommitSide> sides = new ArrayList<>(List.of(CommitSide.STOCK, CommitSide.KPIPE));
        if (o.commits().excl()) {
            sides.add(CommitSide.KPIPE_EXCL);
        }
        int retryMaxMs = id.equals("S7") ? o.measure().s5AddPartitionsRetryMaxMs() : 0;
        return new CommitScenario(id, windowMs, List.copyOf(sides), retryMaxMs);
    }

    /** @return e.g. {@code S6 W=100ms}, {@code S7 W=100ms add-retry 1000ms} */
    String label() {
        return id + " W=" + windowMs + "ms"
                + (addPartitionsRetryMaxMs > 0 ? " add-retry " + addPartitionsRetryMaxMs + "ms" : "");
    }

    /** @return whether this is S7 (the Streams application) */
    boolean isStreams() {
        return id.equals("S7");
    }

    /** @return the side a ratio's denominator is for the target: stock for S6, kpipe-excl for S7 (if run) */
    CommitSide targetBaseline() {
        return isStreams() && sides.contains(CommitSide.KPIPE_EXCL) ? CommitSide.KPIPE_EXCL : CommitSide.STOCK;
    }

    /** @return the figure the target is on: {@code commits_per_s} (S6) or {@code records_per_s} (S7) */
    String targetFigure() {
        return isStreams() ? "records_per_s" : "commits_per_s";
    }

    /** @return the target's minimum ratio */
    double targetRatio() {
        return isStreams() ? S7_MIN_RECORDS_RATIO_VS_EXCL : S6_MIN_COMMITS_RATIO;
    }

    /** Broker settings of every node, all sides alike (see the class documentation). */
    Map<String, String> brokerConfig() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("replica.fetch.min.bytes", Integer.toString(Scenario.FOLLOWER_FETCH_MIN_BYTES));
        m.put("replica.fetch.wait.max.ms", Integer.toString(windowMs));
        m.put("offsets.topic.replication.factor", "2");
        m.put("offsets.topic.num.partitions", "1");
        m.put("transaction.state.log.replication.factor", "2");
        m.put("transaction.state.log.min.isr", "2");
        m.put("transaction.state.log.num.partitions", "1");
        if (addPartitionsRetryMaxMs > 0) {
            m.put(Scenarios.S5_ADD_PARTITIONS_RETRY_MAX_MS, Integer.toString(addPartitionsRetryMaxMs));
        }
        return m;
    }

    /**
     * @param side the side
     * @param o the options (heap, stock mode)
     * @return the side's cluster spec
     */
    ClusterSpec spec(CommitSide side, BenchOptions o) {
        ClusterSpec.Builder b = ClusterSpec.builder()
                .name("bench-" + id + "-W" + windowMs + "ms-" + side.label())
                .nodes(2)
                .heap(o.brokerHeap());
        side.apply(b, o.stockInstallsPlugin());
        brokerConfig().forEach(b::brokerConfig);
        return b.build();
    }

    /** @return a description for the table header and the JSON */
    Map<String, Object> describe(BenchOptions o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("label", label());
        m.put("nodes", 2);
        m.put("every_node_config", brokerConfig());
        m.put("sides", sides.stream().map(CommitSide::label).toList());
        m.put("record_value_bytes", RECORD_BYTES);
        if (isStreams()) {
            m.put(
                    "client",
                    "Kafka Streams, processing.guarantee=exactly_once_v2, commit.interval.ms="
                            + S7_COMMIT_INTERVAL_MS + ", 1 stream thread, mapValues, input "
                            + o.commits().s7InputRecords()
                            + " records on node 1, output on [1,2] min.insync.replicas=2");
        } else {
            m.put(
                    "client",
                    "one classic-protocol consumer, assign() + commitAsync() after every poll that returned"
                            + " records; one acks=1 producer feeding "
                            + o.commits().s6RecordsPerSec() + " records/s");
        }
        m.put("target", targetFigure() + " kpipe/" + targetBaseline().label() + " >= " + targetRatio() + "x");
        return m;
    }

    /** @return one line for the table header */
    String headline(BenchOptions o) {
        return label() + ": 2 nodes, every node replica.fetch.wait.max.ms=" + windowMs
                + ", offsets topic and transaction log on [1,2] led by node 1, "
                + (isStreams()
                        ? "Kafka Streams exactly_once_v2 mapValues, commit.interval.ms=" + S7_COMMIT_INTERVAL_MS
                        : "one consumer, commitAsync after every poll, fed "
                                + o.commits().s6RecordsPerSec() + " records/s");
    }
}
