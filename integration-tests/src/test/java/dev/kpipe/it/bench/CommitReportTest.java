// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.ClusterSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The offset-commit scenarios' definition ({@link CommitScenario}, {@link CommitSide}) and summary
 * ({@link CommitReport}): sides, cluster settings, ratios per round pair, the table and the targets. No brokers.
 */
class CommitReportTest {
    private static final BenchOptions DEFAULTS = BenchOptions.parse(new String[] {"--scenario", "S6,S7"});
    private static final BenchOptions NO_EXCL = BenchOptions.parse(new String[] {"--scenario", "S7", "--no-excl"});

    @Test
    void theSidesAndTheirClusters() {
        CommitScenario s6 = CommitScenario.of("S6", 100, DEFAULTS);
        assertEquals(List.of(CommitSide.STOCK, CommitSide.KPIPE, CommitSide.KPIPE_EXCL), s6.sides());
        assertEquals(
                List.of(CommitSide.STOCK, CommitSide.KPIPE),
                CommitScenario.of("S7", 100, NO_EXCL).sides());
        assertThrows(IllegalArgumentException.class, () -> CommitScenario.of("S5", 100, DEFAULTS));

        ClusterSpec stock = s6.spec(CommitSide.STOCK, DEFAULTS);
        ClusterSpec kpipe = s6.spec(CommitSide.KPIPE, DEFAULTS);
        ClusterSpec excl = s6.spec(CommitSide.KPIPE_EXCL, DEFAULTS);
        assertFalse(stock.installPlugin());
        assertTrue(kpipe.installPlugin() && kpipe.kpipeEnabled());
        assertTrue(excl.installPlugin() && excl.kpipeEnabled());
        assertEquals(null, kpipe.brokerConfig().get(CommitSide.PIPELINED_KEY), "kpipe's default: pipelined");
        assertEquals("false", excl.brokerConfig().get(CommitSide.PIPELINED_KEY));
        for (ClusterSpec c : List.of(stock, kpipe, excl)) {
            assertEquals(2, c.nodes());
            assertEquals("100", c.brokerConfig().get("replica.fetch.wait.max.ms"), "every node a slow follower");
            assertEquals("2", c.brokerConfig().get("offsets.topic.replication.factor"));
            assertEquals("2", c.brokerConfig().get("transaction.state.log.min.isr"));
            assertEquals(null, c.brokerConfig().get("offsets.commit.required.acks"), "Kafka's default, -1");
        }
        assertEquals("bench-S6-W100ms-kpipe-excl", excl.name());

        BenchOptions retry =
                BenchOptions.parse(new String[] {"--scenario", "S6,S7", "--s5-add-partitions-retry-max-ms", "1000"});
        CommitScenario s7 = CommitScenario.of("S7", 100, retry);
        assertEquals("S7 W=100ms add-retry 1000ms", s7.label());
        assertEquals(
                "1000",
                s7.spec(CommitSide.STOCK, retry).brokerConfig().get("add.partitions.to.txn.retry.backoff.max.ms"));
        assertEquals(0, CommitScenario.of("S6", 100, retry).addPartitionsRetryMaxMs(), "S7's only");
    }

    @Test
    void s6TableRatiosPerRoundPairAndTheTarget() {
        CommitScenario s6 = CommitScenario.of("S6", 100, DEFAULTS);
        CommitReport r = new CommitReport(s6);
        double[] stock = {10, 9, 11};
        double[] kpipe = {150, 140, 160};
        double[] excl = {10, 10, 10};
        for (int i = 0; i < 3; i++) {
            r.add(s6Result(s6, CommitSide.STOCK, i + 1, stock[i]));
            r.add(s6Result(s6, CommitSide.KPIPE, i + 1, kpipe[i]));
            r.add(s6Result(s6, CommitSide.KPIPE_EXCL, i + 1, excl[i]));
        }
        Report.Stat ratio = r.ratio(CommitSide.KPIPE, CommitSide.STOCK, "commits_per_s");
        assertEquals(15.0, ratio.median(), 1e-9);
        assertEquals(160 / 11.0, ratio.min(), 1e-9);
        assertEquals(140 / 9.0, ratio.max(), 1e-9);
        assertTrue(r.targetMet());
        String table = r.table(DEFAULTS);
        assertTrue(
                table.contains("| commits/s acknowledged | 10.0 [9.00–11.0] | 150 [140–160] | 10.0 [10.0–10.0] |"
                        + " 15.0x [14.5–15.6] | 15.0x [14.0–16.0] |"),
                table);
        assertTrue(table.contains("| figure | stock | kpipe | kpipe-excl | kpipe/stock | kpipe/kpipe-excl |"), table);
        assertTrue(
                table.contains(
                        "target: commits/s kpipe/stock >= 3x: 15.0x [14.5–15.6] -> MET; errors in all" + " rounds: 0"),
                table);
        assertFalse(table.contains("per transaction"), "S6 has no transactions");
        assertTrue(
                table.contains("| kpipe commits in flight per connection, max | — | — | — | — | — |"),
                "no ratio of a kpipe-only gauge: " + table);
        @SuppressWarnings("unchecked")
        Map<String, Object> summary = (Map<String, Object>) r.toMap(DEFAULTS).get("summary");
        assertEquals(true, summary.get("target_met"));
    }

    @Test
    void s7TargetIsAgainstKpipeExclAndItsRequestsPerTransactionArePrinted() {
        CommitScenario s7 = CommitScenario.of("S7", 100, DEFAULTS);
        assertEquals(CommitSide.KPIPE_EXCL, s7.targetBaseline());
        CommitReport r = new CommitReport(s7);
        r.add(s7Result(s7, CommitSide.STOCK, 1, 500, 2.0));
        r.add(s7Result(s7, CommitSide.KPIPE, 1, 1000, 2.5));
        r.add(s7Result(s7, CommitSide.KPIPE_EXCL, 1, 900, 2.4));
        assertFalse(r.targetMet(), "1.11x < 1.25x");
        String table = r.table(DEFAULTS);
        assertTrue(table.contains("target: records/s kpipe/kpipe-excl >= 1.25x: 1.11x [1.11–1.11] -> MISSED"), table);
        assertTrue(table.contains("| TxnOffsetCommit | 1.00 x 101 ms | 1.00 x 101 ms | 1.00 x 101 ms |"), table);
        assertTrue(table.contains("| transaction period, ms | 500 | 400 | 416.7 |"), table);

        CommitScenario noExcl = CommitScenario.of("S7", 100, NO_EXCL);
        assertEquals(CommitSide.STOCK, noExcl.targetBaseline(), "without kpipe-excl, against stock");
        CommitReport two = new CommitReport(noExcl);
        two.add(s7Result(noExcl, CommitSide.STOCK, 1, 500, 2.0));
        two.add(s7Result(noExcl, CommitSide.KPIPE, 1, 1000, 2.5));
        assertFalse(two.table(NO_EXCL).contains("kpipe-excl"));
        assertThrows(IllegalArgumentException.class, () -> two.add(s7Result(noExcl, CommitSide.KPIPE_EXCL, 1, 1, 1)));
    }

    @Test
    void aSideWithoutRoundsShowsADash() {
        CommitReport r = new CommitReport(CommitScenario.of("S6", 100, DEFAULTS));
        assertEquals("—", CommitReport.range(r.stat(CommitSide.KPIPE, "commits_per_s"), ""));
        assertTrue(Double.isNaN(r.targetRatio().median()));
        assertFalse(r.targetMet());
    }

    private static CommitResult s6Result(CommitScenario s, CommitSide side, int round, double commitsPerSec) {
        Map<String, Double> f = new LinkedHashMap<>();
        f.put("records_per_s", 2000.0);
        f.put("commits_per_s", commitsPerSec);
        return new CommitResult(s.label(), side, round, 15, f, 0, null);
    }

    private static CommitResult s7Result(
            CommitScenario s, CommitSide side, int round, double recordsPerSec, double transactionsPerSec) {
        Map<String, Double> f = new LinkedHashMap<>();
        f.put("records_per_s", recordsPerSec);
        f.put("transactions_per_s", transactionsPerSec);
        for (String api : CommitRounds.APIS) {
            f.put("broker_" + api + "_per_txn", 1.0);
            f.put("broker_" + api + "_ms", 101.0);
        }
        return new CommitResult(s.label(), side, round, 15, f, 0, null);
    }
}
