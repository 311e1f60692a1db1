// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.Report.DISTURBED_CORES;
import static dev.kpipe.it.bench.Report.extra;
import static dev.kpipe.it.bench.Report.fmt;
import static dev.kpipe.it.bench.Report.pct;
import static dev.kpipe.it.bench.Report.ratio;
import static dev.kpipe.it.bench.Report.stat;

import dev.kpipe.it.bench.Report.Stat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Renders a {@link Report} as the printed table: per side median [min..max] of records/s, produce requests/s, records
 * per request, latency and broker CPU per record; the kpipe/stock ratios; the scenario's extra lines (S3's producers
 * and budget, the cost lines, S5's and S1's ceilings, other processes' CPU) and the targets. Stateless; any thread (the
 * report is only read).
 */
final class ReportTable {
    private ReportTable() {}

    /**
     * @param r the scenario's report
     * @param o the options (window length, warm-up, stock mode)
     * @return the table, several lines
     */
    static String of(Report r, BenchOptions o) {
        Scenario scenario = r.scenario();
        List<RoundResult> stock = r.rounds(Variant.STOCK);
        List<RoundResult> kpipe = r.rounds(Variant.KPIPE);
        StringBuilder sb = new StringBuilder();
        sb.append(scenario.headline()).append('\n');
        sb.append(String.format(
                Locale.ROOT,
                "  %d round(s) per side x %d s measured (+%d s warm-up), stock = %s%n",
                Math.max(stock.size(), kpipe.size()),
                o.durationSeconds(),
                o.warmupSeconds(),
                o.stockInstallsPlugin() ? "kpipe jar with kpipe.enable=false" : "kpipe not installed"));
        String h = String.format(
                Locale.ROOT,
                "  %-12s %-26s %-24s %-8s %-26s %-26s %s%n",
                "",
                "records/s",
                "produce req/s",
                "rec/req",
                "p50 ms",
                "p99 ms",
                "broker CPU us/record");
        sb.append(h);
        for (Variant v : Variant.values()) {
            if (r.rounds(v).isEmpty()) {
                continue;
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "  %-12s %-26s %-24s %-8s %-26s %-26s %s%n",
                    v.label(),
                    stat(r.stat(v, RoundResult::recordsPerSec), 0),
                    stat(r.stat(v, RoundResult::produceRequestsPerSec), 1),
                    fmt1(r.stat(v, Report::recPerReq).median()),
                    stat(r.stat(v, RoundResult::p50Ms), 1),
                    stat(r.stat(v, RoundResult::p99Ms), 1),
                    stat(r.stat(v, Report::cpuPerRecord), 2)));
        }
        if (r.hasPairs()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  %-12s %-26s %-24s %-8s %-26s %-26s %s%n",
                    "kpipe/stock",
                    ratio(r.ratio(RoundResult::recordsPerSec)),
                    ratio(r.ratio(RoundResult::produceRequestsPerSec)),
                    "",
                    ratio(r.ratio(RoundResult::p50Ms)),
                    ratio(r.ratio(RoundResult::p99Ms)),
                    ratio(r.ratio(Report::cpuPerRecord))));
        }
        sb.append(
                scenario.isS10()
                        ? "  (median [min..max] over rounds; ratios per round pair; records/s = produce req/s = round trips"
                                + " of the producing raw connections that ended in the window, one record each; latency ="
                                + " per round trip)\n"
                        : scenario.isChildProcessClient()
                                ? "  (median [min..max] over rounds; ratios per round pair; records/s = growth of the partition's"
                                        + " high watermark; produce req/s = the leader's Produce RequestMetrics; no latency for a"
                                        + " client in a child process)\n"
                                : "  (median [min..max] over rounds; ratios per round pair; produce req/s = responses from the"
                                        + " leader (producer-node-metrics response-total, node-1); latency = send() to ack per"
                                        + " record)\n");
        if (scenario.isS3()) {
            sb.append(S3Lines.of(r));
        }
        if (scenario.isS9() || scenario.isS10()) {
            sb.append(RawLines.of(r));
        }
        if ((scenario.windowMs == 0 || r.hasControl() || scenario.isFixedLoad()) && !scenario.isS10()) {
            sb.append(CostLines.of(r));
        }
        if (scenario.isS5() && r.hasPairs()) {
            double perRequest = r.stat(Variant.STOCK, Report::recPerReq).median();
            double ceiling = scenario.s5RatioCeiling(perRequest);
            double measured = r.ratio(RoundResult::recordsPerSec).median();
            sb.append(String.format(
                    Locale.ROOT,
                    "  S5 ceiling: a transaction of %d records = %.1f produce requests (%.1f"
                            + " records each) + 1 commit round trip: stock (n + 1) W, kpipe (n / %d + 1) W, kpipe/stock <= %.2fx;"
                            + " measured %.2fx = %s of it; committed records/s stock %s, kpipe %s%n",
                    scenario.commitEvery,
                    scenario.commitEvery / perRequest,
                    perRequest,
                    scenario.maxInFlight,
                    ceiling,
                    measured,
                    pct(measured / ceiling),
                    fmt(r.stat(Variant.STOCK, x -> extra(x, "committed_records_per_s"))
                            .median()),
                    fmt(r.stat(Variant.KPIPE, x -> extra(x, "committed_records_per_s"))
                            .median())));
        }
        if (scenario.hasCeiling()) {
            double c = scenario.ceilingRequestsPerSec();
            sb.append(String.format(
                    Locale.ROOT,
                    "  ceiling max.in.flight/W = %s/%d ms = %s req/s: kpipe reached %s,"
                            + " stock %s (stock's own ceiling is 1/W = %s req/s)%n",
                    scenario.pipelinedInFlight() == scenario.maxInFlight
                            ? Integer.toString(scenario.maxInFlight)
                            : scenario.pipelinedInFlight() + " (kpipe's per-connection limit; the client's "
                                    + scenario.maxInFlight + ")",
                    scenario.windowMs,
                    fmt(c),
                    pctStat(r.ceilingFraction(Variant.KPIPE)),
                    pctStat(r.ceilingFraction(Variant.STOCK)),
                    fmt(1000.0 / scenario.windowMs)));
        }
        Stat inflight = r.stat(Variant.KPIPE, x -> extra(x, "kpipe_inflight_requests_per_connection_max"));
        if (!Double.isNaN(inflight.max())) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  kpipe inflight-requests-per-connection-max (most requests in flight on one connection since the"
                            + " cluster started): %.0f after the last round%s%n",
                    inflight.max(),
                    inflight.max() <= 1
                            ? " (the client never had two produce requests in flight: no pipelining)"
                            : ""));
        }
        Stat other = Stat.of(Stream.concat(stock.stream(), kpipe.stream())
                .map(x -> x.extra().get("cpu_cores_other_processes"))
                .map(o2 -> o2 instanceof Number n ? n.doubleValue() : Double.NaN)
                .toList());
        if (!Double.isNaN(other.median())) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  CPU of other processes during the windows: median %.2f, max %.2f cores" + " of %d%s%n",
                    other.median(),
                    other.max(),
                    HostInfo.cpus(),
                    other.max() > DISTURBED_CORES
                            ? "  (WARNING: disturbed by other load; rerun on a quiet machine)"
                            : ""));
        }
        for (Map<String, Object> t : r.targets()) {
            double v = (Double) t.get("measured_median");
            sb.append("  target ")
                    .append(t.get("target"))
                    .append(": ")
                    .append(
                            "%".equals(t.get("unit"))
                                    ? pct(v)
                                    : "count".equals(t.get("unit"))
                                            ? String.format(Locale.ROOT, "%.0f", v)
                                            : "B".equals(t.get("unit"))
                                                    ? String.format(Locale.ROOT, "%.0f B", v)
                                                    : String.format(Locale.ROOT, "%.3fx", v))
                    .append(Boolean.TRUE.equals(t.get("met")) ? "  MET" : "  MISSED")
                    .append('\n');
        }
        return sb.toString();
    }

    private static String pctStat(Stat s) {
        return String.format(Locale.ROOT, "%.0f%% [%.0f..%.0f%%]", 100 * s.median(), 100 * s.min(), 100 * s.max());
    }

    private static String fmt1(double d) {
        return String.format(Locale.ROOT, "%.1f", d);
    }
}
