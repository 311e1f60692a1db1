// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fixed-load report from fixed rounds: medians of per-round ratios (kpipe/stock and the A/A stock-b/stock), CPU
 * per record and per produce request, requests per record, latency percentiles, and the S2F and S8 targets. No
 * brokers.
 */
class ReportCostTest {
    private static RoundResult round(
            Variant v, int round, double recordsPerSec, double requestsPerSec, double cpuUsPerRecord) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("broker_cpu_us_per_record", cpuUsPerRecord);
        return new RoundResult(
                "S2F",
                v,
                round,
                20,
                (long) (recordsPerSec * 20),
                recordsPerSec,
                requestsPerSec,
                1,
                2,
                3,
                4,
                1,
                0,
                null,
                extra);
    }

    /** An S8 round: CPU per produce request and latency percentiles given. */
    private static RoundResult s8Round(
            Variant v, int round, double requestsPerSec, double cpuUsPerRequest, double p99, double p999) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("broker_cpu_us_per_record", cpuUsPerRequest * requestsPerSec / 6400);
        extra.put("broker_cpu_us_per_produce_request", cpuUsPerRequest);
        extra.put("leader_cpu_us_per_produce_request", cpuUsPerRequest / 2);
        extra.put("broker_selects_per_produce_request", 1.5);
        return new RoundResult(
                "S8", v, round, 20, 6400 * 20, 6400, requestsPerSec, 1, p99, p999, p999, 1, 0, null, extra);
    }

    private static Report s8Report(String... args) {
        Report r = new Report(Scenarios.s8(2, BenchOptions.parse(args)));
        r.add(s8Round(Variant.STOCK, 1, 800, 100, 10, 20));
        r.add(s8Round(Variant.KPIPE, 1, 800, 104, 9, 30));
        r.add(s8Round(Variant.STOCK, 2, 800, 100, 10, 20));
        r.add(s8Round(Variant.KPIPE, 2, 800, 102, 9, 30));
        return r;
    }

    @Test
    void s8PrintsTheCostPerRequestAndTheTailPerSideWithoutAnAaRun() {
        Report r = s8Report("--scenario", "S8", "--no-aa");
        assertEquals(1.03, r.ratio(Report::cpuPerRequest).median(), 1e-9, "pairs 1.04, 1.02");
        String table = r.table(BenchOptions.parse(new String[] {"--scenario", "S8", "--no-aa"}));
        assertTrue(table.contains("broker CPU us/produce request: stock 100.0 [100.0..100.0], kpipe 103.0"), table);
        assertTrue(table.contains("produce requests per 1000 records: stock 125.00"), table);
        assertTrue(table.contains("processor rounds (selector polls) per produce request: stock 1.50"), table);
        assertTrue(table.contains("latency p999 ms: stock 20.0 [20.0..20.0], kpipe 30.0 [30.0..30.0]"), table);
        assertTrue(table.contains("CPU/request 1.03x [1.02..1.04]"), table);
        assertTrue(table.contains("kpipe/stock   latency p50 1.00x [1.00..1.00]   p99 0.90x"), table);
        assertTrue(table.contains("p999 1.50x"), table);
        assertTrue(table.contains("offered 6,400 records/s"), table);
        assertTrue(!table.contains("ceiling max.in.flight/W"), "no one-connection ceiling at a fixed load: " + table);
        assertTrue(!table.contains("A/A"), table);
        assertTrue(table.contains("target broker CPU/produce request kpipe/stock <= 1.05: 1.030x  MET"), table);
        assertTrue(table.contains("target p99 kpipe/stock <= 1.0: 0.900x  MET"), table);
        assertTrue(
                table.contains("target kpipe records/s >= 0.97 x offered (the offered load delivered): 1.000x  MET"),
                table);
        assertTrue(
                table.contains("leader CPU us/produce request (node 1 alone): stock 50.0 [50.0..50.0], kpipe 51.5"),
                table);
        assertTrue(table.contains("kpipe/stock   leader CPU/request 1.03x [1.02..1.04]"), table);
        @SuppressWarnings("unchecked")
        Map<String, Object> summary =
                (Map<String, Object>) r.toMap(BenchOptions.parse(new String[0])).get("summary");
        @SuppressWarnings("unchecked")
        Map<String, Object> ratios = (Map<String, Object>) summary.get("kpipe_over_stock");
        assertTrue(ratios.containsKey("broker_cpu_us_per_produce_request"), ratios.toString());
        assertTrue(ratios.containsKey("latency_p999_ms"), ratios.toString());
    }

    @Test
    void s8WithAnAaRunShowsTheControlsCostPerRequestAndTail() {
        Report r = s8Report("--scenario", "S8");
        r.addControl(s8Round(Variant.STOCK, 1, 800, 110, 11, 22));
        r.addControl(s8Round(Variant.STOCK, 2, 800, 90, 10, 20));
        String table = r.table(BenchOptions.parse(new String[] {"--scenario", "S8"}));
        assertTrue(
                table.contains("broker CPU us/produce request: stock 100.0 [100.0..100.0], kpipe 103.0 [102.0..104.0],"
                        + " stock-b 100.0 [90.0..110.0]"),
                table);
        assertTrue(table.contains("A/A stock-b/stock CPU/record"), table);
        assertTrue(table.contains("CPU/request 1.00x [0.90..1.10]"), table);
        assertTrue(table.contains("A/A stock-b/stock latency p50 1.00x"), table);
        assertTrue(table.contains("A/A stock-b/stock leader CPU/request 1.00x [0.90..1.10]"), table);
        List<Map<String, Object>> targets = r.targets();
        assertEquals(3, targets.size());
        assertEquals(Boolean.TRUE, targets.get(1).get("met"));
        r.add(s8Round(Variant.STOCK, 3, 800, 100, 10, 20));
        r.add(s8Round(Variant.KPIPE, 3, 800, 110, 12, 30));
        r.add(s8Round(Variant.STOCK, 4, 800, 100, 10, 20));
        r.add(s8Round(Variant.KPIPE, 4, 800, 110, 12, 30));
        assertEquals(Boolean.FALSE, r.targets().get(1).get("met"), "CPU/request pairs 1.04, 1.02, 1.10, 1.10");
        assertEquals(Boolean.FALSE, r.targets().get(2).get("met"), "p99 pairs 0.9, 0.9, 1.2, 1.2");
    }

    private static Report report(double[] stockCpu, double[] kpipeCpu, double[] controlCpu) {
        BenchOptions o = BenchOptions.parse(new String[] {"--scenario", "S2F"});
        Report r = new Report(Scenarios.s2Fixed(o));
        for (int i = 0; i < stockCpu.length; i++) {
            r.add(round(Variant.STOCK, i + 1, 20_000, 400, stockCpu[i]));
            r.add(round(Variant.KPIPE, i + 1, 20_000, 500, kpipeCpu[i]));
            r.addControl(round(Variant.STOCK, i + 1, 20_000, 400, controlCpu[i]));
        }
        return r;
    }

    @Test
    void ratiosArePerRoundPairThenTheMedianOfAnEvenCount() {
        Report r =
                report(new double[] {10, 10, 20, 10}, new double[] {10.1, 10.5, 20, 11}, new double[] {11, 9, 20, 10});
        Report.Stat k = r.ratio(Report::cpuPerRecord);
        assertEquals((1.01 + 1.05) / 2, k.median(), 1e-9, "pairs 1.01, 1.05, 1.00, 1.10: median of the middle two");
        assertEquals(1.00, k.min(), 1e-9);
        assertEquals(1.10, k.max(), 1e-9);
        Report.Stat aa = r.controlRatio(Report::cpuPerRecord);
        assertEquals(1.0, aa.median(), 1e-9, "A/A pairs 1.1, 0.9, 1.0, 1.0");
        assertEquals(0.9, aa.min(), 1e-9);
        assertEquals(1.1, aa.max(), 1e-9);
    }

    @Test
    void requestsPerRecordTellBatchingApartFromCpu() {
        Report r = report(new double[] {10, 10, 10, 10}, new double[] {10, 10, 10, 10}, new double[] {10, 10, 10, 10});
        assertEquals(1.25, r.ratio(Report::requestsPerThousandRecords).median(), 1e-9, "500 vs 400 req/s at 20,000/s");
        assertEquals(20, Report.requestsPerThousandRecords(round(Variant.STOCK, 1, 20_000, 400, 1)), 1e-9);
        String table = r.table(BenchOptions.parse(new String[] {"--scenario", "S2F"}));
        assertTrue(table.contains("kpipe/stock   CPU/record 1.00x"), table);
        assertTrue(table.contains("requests/record 1.25x"), table);
        assertTrue(table.contains("A/A stock-b/stock CPU/record 1.00x"), table);
        assertTrue(table.contains("offered 20,000 records/s"), table);
        assertTrue(!table.contains("leader CPU"), "one broker: the leader's CPU is the broker CPU: " + table);
    }

    @Test
    void theCpuTargetIsMetAtOrBelow103AndMissedAbove() {
        List<Map<String, Object>> met = report(
                        new double[] {10, 10, 10, 10},
                        new double[] {10.3, 10.2, 10.3, 10.1},
                        new double[] {10, 10, 10, 10})
                .targets();
        Map<String, Object> cpu = met.get(met.size() - 1);
        assertEquals("broker CPU/record kpipe/stock <= 1.03", cpu.get("target"));
        assertEquals(Boolean.TRUE, cpu.get("met"));
        List<Map<String, Object>> missed = report(
                        new double[] {10, 10, 10, 10},
                        new double[] {10.4, 10.5, 10.4, 10.6},
                        new double[] {10, 10, 10, 10})
                .targets();
        assertEquals(Boolean.FALSE, missed.get(missed.size() - 1).get("met"));
    }

    @Test
    void theFixedLoadAndLargeBatchScenariosFromTheOptions() {
        BenchOptions o = BenchOptions.parse(new String[] {
            "--scenario",
            "S2F,S1L",
            "--s2f-rate",
            "8000",
            "--s2f-producers",
            "2",
            "--s1l-window-ms",
            "100",
            "--s1l-follower-fetch-max-kib",
            "1024"
        });
        assertEquals(List.of("S2F", "S1L"), o.scenarios());
        Scenario f = Scenarios.s2Fixed(o);
        assertEquals(8000, f.offeredRecordsPerSec);
        assertEquals(2, f.producers);
        assertEquals(1024, f.recordBytes);
        assertEquals(5, f.lingerMs);
        assertEquals("1", f.acks);
        assertTrue(f.aaControl);
        Scenario l = Scenarios.s1Large(o);
        assertEquals(100, l.windowMs);
        assertEquals(1024 * 1024, l.batchBytes);
        assertEquals(50, l.lingerMs);
        assertEquals(4.5, l.minRatio());
        assertTrue(l.describe().get("node_config").toString().contains("replica.fetch.max.bytes=1048576"));
        Scenario byDefault = Scenarios.s1Large(BenchOptions.parse(new String[] {"--scenario", "S1L"}));
        assertEquals(250, byDefault.windowMs);
        assertTrue(
                byDefault.describe().get("node_config").toString().contains("replica.fetch.max.bytes=67108864"),
                "the benchmark's cluster config: follower fetches of 64 MiB, as S3's");
        assertEquals(false, Scenarios.s2Fixed(BenchOptions.parse(new String[] {"--no-aa"})).aaControl);
    }
}
