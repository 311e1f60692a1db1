// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.Report.extra;
import static dev.kpipe.it.bench.Report.fmt;
import static dev.kpipe.it.bench.Report.stat;

import java.util.List;
import java.util.Locale;

/** The S3 (back-pressure) lines of a {@link Report}'s table: fairness, errors, heap, kpipe's budget. Stateless. */
final class S3Lines {
    private S3Lines() {}

    private static String mib(double bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
    }

    /** S3's back-pressure figures: per side fairness, errors, heap; for kpipe the budget's peak and waits. */
    static String of(Report report) {
        StringBuilder sb = new StringBuilder();
        for (Variant v : Variant.values()) {
            List<RoundResult> rs = report.rounds(v);
            if (rs.isEmpty()) {
                continue;
            }
            long errors = rs.stream().mapToLong(RoundResult::errors).sum();
            sb.append(String.format(
                    Locale.ROOT,
                    "  %-6s slowest/median producer %s (records in the window: min %s,"
                            + " median %s, max %s); errors %d; leader heap used peak %s, old gen after GC peak %s (-Xmx %s)%n",
                    v.label(),
                    stat(report.stat(v, r -> extra(r, "slowest_producer_share_of_median")), 2),
                    fmt(report.stat(v, r -> extra(r, "producer_records_min")).min()),
                    fmt(report.stat(v, r -> extra(r, "producer_records_median")).median()),
                    fmt(report.stat(v, r -> extra(r, "producer_records_max")).max()),
                    errors,
                    mib(report.maxExtra(v, "leader_heap_used_peak_bytes")),
                    report.maxExtra(v, "leader_old_gen_after_gc_peak_bytes") > 0
                            ? mib(report.maxExtra(v, "leader_old_gen_after_gc_peak_bytes"))
                            : "n/a (no old-generation collection)",
                    mib(report.maxExtra(v, "leader_heap_max_bytes"))));
        }
        if (!report.rounds(Variant.KPIPE).isEmpty()) {
            double peak = report.maxExtra(Variant.KPIPE, "kpipe_inflight_bytes_max");
            double largest = report.maxExtra(Variant.KPIPE, "broker_produce_request_bytes_max");
            long budget = report.scenario().budgetBytes();
            sb.append(String.format(
                    Locale.ROOT,
                    "  kpipe  in-flight bytes peak %s (%,.0f B) vs budget %s + largest produce"
                            + " request %,.0f B = %,.0f B: %s; connections pipelined %s; budget waits %s (%s ms waited in all);"
                            + " upgrades deferred %s; idle reservations revoked %s; oversize admitted %s%n",
                    mib(peak),
                    peak,
                    mib(budget),
                    largest,
                    budget + largest,
                    peak <= budget + largest ? "within" : "EXCEEDED",
                    fmt(report.maxExtra(Variant.KPIPE, "kpipe_pipelined_connections")),
                    fmt(report.maxExtra(Variant.KPIPE, "kpipe_budget_wait_total")),
                    fmt(report.maxExtra(Variant.KPIPE, "kpipe_budget_wait_time_ms_total")),
                    fmt(report.maxExtra(Variant.KPIPE, "kpipe_upgrade_deferred_total")),
                    fmt(report.maxExtra(Variant.KPIPE, "kpipe_budget_reservation_revoked_total")),
                    fmt(report.maxExtra(Variant.KPIPE, "kpipe_budget_oversize_admitted_total"))));
            sb.append("  (kpipe counters are the leader's since start, at the end of each round: the peak covers every"
                    + " round so far, warm-ups included)\n");
        }
        return sb.toString();
    }
}
