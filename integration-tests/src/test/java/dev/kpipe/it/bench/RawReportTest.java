// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * S9's and S10's report from fixed rounds: the round line's figures, the table's lines and the targets (issue 33);
 * the class histogram's parsing. No brokers.
 */
class RawReportTest {
    private static RoundResult round(String scenario, Variant v, int round, Map<String, Object> extra) {
        return new RoundResult(scenario, v, round, 20, 20_000, 1000, 60, 2, 9, 12, 15, 3, 0, null, extra);
    }

    private static RoundResult s9Round(Variant v, int round, double gapMaxMs, double gapP99Ms) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("ack_gap_max_ms", gapMaxMs);
        extra.put("ack_gap_p99_ms", gapP99Ms);
        extra.put("slow_reader_requests_written", 1234.0);
        extra.put("slow_readers_stalled_at_window_end", v == Variant.STOCK ? 8.0 : 5.0);
        if (v == Variant.KPIPE) {
            extra.put("kpipe_held_responses_at_end", 3.0);
            extra.put("kpipe_inflight_requests_at_end", 128.0);
            extra.put("kpipe_inflight_bytes_at_end", 4096.0 * 1024);
        }
        return round("S9 W=2ms 8 slow readers", v, round, extra);
    }

    private static RoundResult s10Round(Variant v, int round, double heapPerConnection) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("leader_heap_per_connection_bytes", heapPerConnection);
        extra.put("leader_cpu_us_per_produce_request", 250.0);
        if (v == Variant.KPIPE) {
            extra.put("kpipe_connection_dump_ms", 4.5);
            extra.put("kpipe_connection_dump_chars", 17_000.0);
            extra.put("kpipe_pipelined_connections", 1000.0);
        }
        return round("S10 1000 connections", v, round, extra);
    }

    @Test
    void s9ShowsTheSlowReadersQuotaFiguresWhenTheBrokersRecordThem() {
        BenchOptions o = BenchOptions.parse(new String[] {"--scenario", "S9", "--s9-slow-quota-kib", "2048"});
        Report r = new Report(Scenarios.s9(2, o));
        for (Variant v : Variant.values()) {
            RoundResult x = s9Round(v, 1, 500, 40)
                    .withExtra(Map.of(
                            "slow_reader_quota_throttle_ms_avg_at_end",
                            v == Variant.STOCK ? 350.0 : 700.0,
                            "slow_reader_quota_byte_rate_at_end",
                            2048.0 * 1024));
            r.add(x);
            assertTrue(
                    x.line().contains(", quota throttle avg " + (v == Variant.STOCK ? 350 : 700) + " ms at 2048 KiB/s"),
                    x.line());
        }
        String table = r.table(o);
        assertTrue(
                table.contains("slow readers' quota throttle avg ms at each round's end: stock 350 [350..350], kpipe"
                        + " 700 [700..700]"),
                table);
        Report without = new Report(Scenarios.s9(2, o));
        without.add(s9Round(Variant.STOCK, 1, 500, 40));
        without.add(s9Round(Variant.KPIPE, 1, 500, 40));
        assertFalse(without.table(o).contains("quota throttle"), "no quota figures, no line");
    }

    @Test
    void s9ComparesTheLongestAckGapPerRoundPair() {
        BenchOptions o = BenchOptions.parse(new String[] {"--scenario", "S9"});
        Report r = new Report(Scenarios.s9(2, o));
        r.add(s9Round(Variant.STOCK, 1, 500, 40));
        r.add(s9Round(Variant.KPIPE, 1, 600, 50));
        r.add(s9Round(Variant.STOCK, 2, 400, 40));
        r.add(s9Round(Variant.KPIPE, 2, 400, 30));
        assertEquals(1.1, r.ratio(x -> Report.extra(x, "ack_gap_max_ms")).median(), 1e-9, "pairs 1.2 and 1.0");
        String table = r.table(o);
        assertTrue(
                table.contains("good producer's longest ack gap ms: stock 450.0 [400.0..500.0], kpipe 500.0"), table);
        assertTrue(table.contains("kpipe/stock   longest ack gap 1.10x [1.00..1.20]"), table);
        assertTrue(
                table.contains("slow readers stalled at the window's end (no write in its last second) of 8: stock 8"
                        + " [8..8], kpipe 5 [5..5]"),
                table);
        assertTrue(table.contains("kpipe at each round's end: held responses 3 [3..3], requests in flight 128"), table);
        assertTrue(table.contains("target longest ack gap kpipe/stock <= 1.1: 1.100x  MET"), table);
        assertFalse(table.contains("ceiling max.in.flight/W"), table);
        String line = s9Round(Variant.KPIPE, 1, 600, 50).line();
        assertTrue(
                line.contains(
                        "ack gap max 600.0 ms p99 50.0 ms  slow-reader requests 1234, stalled 5  kpipe at end: held 3 in"
                                + " flight 128 (4096 KiB)"),
                line);

        Report worse = new Report(Scenarios.s9(2, o));
        worse.add(s9Round(Variant.STOCK, 1, 494, 40));
        worse.add(s9Round(Variant.KPIPE, 1, 1539, 50));
        assertTrue(
                worse.table(o).contains("target longest ack gap kpipe/stock <= 1.1: 3.115x  MISSED"), worse.table(o));
    }

    @Test
    void s9WithAGoodRateChecksThatStockDeliveredIt() {
        for (int rate : new int[] {1000, 2000}) { // each round acknowledges 1,000 records/s
            BenchOptions o = BenchOptions.parse(new String[] {"--scenario", "S9", "--s9-good-rate", "" + rate});
            Report r = new Report(Scenarios.s9(2, o));
            r.add(s9Round(Variant.STOCK, 1, 500, 40));
            r.add(s9Round(Variant.KPIPE, 1, 500, 40));
            String table = r.table(o);
            String target = "target stock records/s >= 0.97 x offered (both sides carried the same work): ";
            assertTrue(table.contains(target + (rate == 1000 ? "1.000x  MET" : "0.500x  MISSED")), table);
        }
        Report flatOut = new Report(Scenarios.s9(2, BenchOptions.parse(new String[] {"--scenario", "S9"})));
        flatOut.add(s9Round(Variant.STOCK, 1, 500, 40));
        flatOut.add(s9Round(Variant.KPIPE, 1, 500, 40));
        assertEquals(1, flatOut.targets().size(), "flat out: the gap's target only");
    }

    @Test
    void s9sActiveRegimeShowsTheReplacedSlowReadersAndTheUndrainedWaits() {
        BenchOptions o = BenchOptions.parse(new String[] {"--scenario", "S9", "--s9-active"});
        Report r = new Report(Scenarios.s9(2, o));
        for (Variant v : Variant.values()) {
            Map<String, Object> active = new LinkedHashMap<>();
            active.put("slow_reader_reconnects_in_window", v == Variant.STOCK ? 12.0 : 7.0);
            if (v == Variant.KPIPE) {
                active.put("kpipe_wait_undrained_total_at_end", 40.0);
            }
            r.add(s9Round(v, 1, 500, 40).withExtra(active));
        }
        String line = r.rounds(Variant.KPIPE).get(0).line();
        assertTrue(
                line.contains(
                        "stalled 5, replaced 7  kpipe at end: held 3 in flight 128 (4096 KiB), undrained waits 40"),
                line);
        String table = r.table(o);
        assertTrue(
                table.contains("slow readers replaced in the window (active): stock 12 [12..12], kpipe 7 [7..7]"),
                table);
    }

    @Test
    void s10ComparesTheHeapPerConnectionAsADifference() {
        BenchOptions o = BenchOptions.parse(new String[] {"--scenario", "S10"});
        Report r = new Report(Scenarios.s10(1000, o));
        r.add(s10Round(Variant.STOCK, 1, 5000));
        r.add(s10Round(Variant.KPIPE, 1, 5900));
        r.add(s10Round(Variant.STOCK, 2, 5100));
        r.add(s10Round(Variant.KPIPE, 2, 6300));
        assertEquals(
                List.of(900.0, 1200.0),
                List.of(
                        RawLines.heapDifference(r).min(),
                        RawLines.heapDifference(r).max()));
        String table = r.table(o);
        assertTrue(table.contains("heap per connection kpipe - stock per round pair: 1,050 [900..1,200] B"), table);
        assertTrue(table.contains("kpipe connection dump (JMX read, wall): 4.5 [4.5..4.5] ms, 17,000"), table);
        assertTrue(
                table.contains("target heap per idle pipelined connection kpipe - stock <= 1024 B: 1050 B  MISSED"),
                table);
        assertFalse(table.contains("processor rounds"), "no S2-style cost lines: " + table);
        String line = s10Round(Variant.KPIPE, 1, 5900).line();
        assertTrue(line.contains("heap/connection 5900 B  leader CPU/request 250 us  dump 4.5 ms (17000 chars)"), line);
    }

    @Test
    void aClassHistogramIsReadFromJcmdsOutput() throws IOException {
        String out = """
                12345:
                 num     #instances         #bytes  class name (module)
                -------------------------------------------------------
                   1:         20000        1600000  [B (java.base@17.0.12)
                   2:          1000          32000  java.lang.String (java.base@17.0.12)
                   3:           200          22400  dev.kpipe.plugin.pipeline.ConnectionPipeline
                Total         21200        1654400
                """;
        ClassHistogram h = ClassHistogram.parse(out);
        assertEquals(1_654_400, h.totalBytes());
        assertEquals(21_200, h.instances());
        assertEquals(22_400L, h.bytesByClass().get("dev.kpipe.plugin.pipeline.ConnectionPipeline"));
        ClassHistogram before = new ClassHistogram(0, 0, Map.of("[B", 1_500_000L, "java.lang.String", 32_000L));
        assertEquals(
                Map.of("[B", 100_000L, "dev.kpipe.plugin.pipeline.ConnectionPipeline", 22_400L),
                h.growthSince(before, 2));
        assertThrows(IOException.class, () -> ClassHistogram.parse("12345:\nAttach failed"));
    }
}
