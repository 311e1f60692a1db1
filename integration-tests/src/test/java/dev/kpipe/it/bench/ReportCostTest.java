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
 * per record, requests per record, and the S2F CPU target. No brokers.
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
