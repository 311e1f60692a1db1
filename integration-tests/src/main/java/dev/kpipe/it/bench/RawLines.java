// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.Report.extra;
import static dev.kpipe.it.bench.Report.ratio;
import static dev.kpipe.it.bench.Report.stat;

import dev.kpipe.it.bench.Report.Stat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The raw-socket scenarios' figures in print, and the mixed fleet's (S11): S9's, S10's and S11's part of each round's
 * line, S9's and S10's lines of the table, and their targets
 * (issue 33). Stateless.
 */
final class RawLines {
    /** S9 target: the good producer's longest gap between two acknowledgements, kpipe/stock, at most this. */
    static final double S9_MAX_GAP_RATIO = 1.1;
    /** S10 target: heap per idle pipelined connection, kpipe minus stock, at most this many bytes. */
    static final double S10_MAX_HEAP_DIFF_BYTES = 1024;

    private RawLines() {}

    /**
     * @param r a round
     * @return S9's, S10's or S11's figures for the round's line, or "" for another scenario's round
     */
    static String roundFigures(RoundResult r) {
        Map<String, Object> x = r.extra();
        if (x.containsKey("excluded_p99_ms")) {
            return String.format(
                    Locale.ROOT,
                    "  excluded %.0f rec/s p50 %.1f p99 %.1f ms  pipelined %.0f rec/s p50 %.1f p99 %.1f ms",
                    extra(r, "excluded_records_per_s"),
                    extra(r, "excluded_p50_ms"),
                    extra(r, "excluded_p99_ms"),
                    extra(r, "pipelined_records_per_s"),
                    extra(r, "pipelined_p50_ms"),
                    extra(r, "pipelined_p99_ms"));
        }
        if (x.containsKey("ack_gap_max_ms")) {
            return String.format(
                    Locale.ROOT,
                    "  ack gap max %.1f ms p99 %.1f ms  slow-reader requests %.0f, stalled %.0f%s%s%s",
                    extra(r, "ack_gap_max_ms"),
                    extra(r, "ack_gap_p99_ms"),
                    extra(r, "slow_reader_requests_written"),
                    extra(r, "slow_readers_stalled_at_window_end"),
                    x.containsKey("slow_reader_reconnects_in_window")
                            ? String.format(
                                    Locale.ROOT, ", replaced %.0f", extra(r, "slow_reader_reconnects_in_window"))
                            : "",
                    x.containsKey("slow_reader_quota_throttle_ms_avg_at_end")
                            ? String.format(
                                    Locale.ROOT,
                                    ", quota throttle avg %.0f ms at %.0f KiB/s",
                                    extra(r, "slow_reader_quota_throttle_ms_avg_at_end"),
                                    extra(r, "slow_reader_quota_byte_rate_at_end") / 1024)
                            : "",
                    x.containsKey("kpipe_held_responses_at_end")
                            ? String.format(
                                    Locale.ROOT,
                                    "  kpipe at end: held %.0f in flight %.0f (%.0f KiB)%s",
                                    extra(r, "kpipe_held_responses_at_end"),
                                    extra(r, "kpipe_inflight_requests_at_end"),
                                    extra(r, "kpipe_inflight_bytes_at_end") / 1024,
                                    x.containsKey("kpipe_wait_undrained_total_at_end")
                                            ? String.format(
                                                    Locale.ROOT,
                                                    ", undrained waits %.0f",
                                                    extra(r, "kpipe_wait_undrained_total_at_end"))
                                            : "")
                            : "");
        }
        if (x.containsKey("leader_heap_per_connection_bytes")) {
            return String.format(
                    Locale.ROOT,
                    "  heap/connection %.0f B  leader CPU/request %.0f us%s",
                    extra(r, "leader_heap_per_connection_bytes"),
                    extra(r, "leader_cpu_us_per_produce_request"),
                    x.containsKey("kpipe_connection_dump_ms")
                            ? String.format(
                                    Locale.ROOT,
                                    "  dump %.1f ms (%.0f chars), pipelined connections %.0f",
                                    extra(r, "kpipe_connection_dump_ms"),
                                    extra(r, "kpipe_connection_dump_chars"),
                                    extra(r, "kpipe_pipelined_connections"))
                            : "");
        }
        return "";
    }

    /**
     * @param r an S9 or S10 report
     * @return its lines of the table (before the targets)
     */
    static String of(Report r) {
        StringBuilder sb = new StringBuilder();
        if (r.scenario().isS9()) {
            sb.append(perSide(r, "good producer's longest ack gap ms", "ack_gap_max_ms", 1));
            sb.append(perSide(r, "good producer's p99 ack gap ms (gaps over 0.1 ms)", "ack_gap_p99_ms", 1));
            sb.append(perSide(r, "slow-reader requests written in the window", "slow_reader_requests_written", 0));
            sb.append(perSide(
                    r,
                    "slow readers stalled at the window's end (no write in its last second) of "
                            + r.scenario().slowReaders,
                    "slow_readers_stalled_at_window_end",
                    0));
            if (r.scenario().slowReadersActive) {
                sb.append(perSide(
                        r, "slow readers replaced in the window (active)", "slow_reader_reconnects_in_window", 0));
            }
            if (r.rounds(Variant.STOCK).stream()
                    .anyMatch(x -> x.extra().containsKey("slow_reader_quota_throttle_ms_avg_at_end"))) {
                sb.append(perSide(
                        r,
                        "slow readers' quota throttle avg ms at each round's end",
                        "slow_reader_quota_throttle_ms_avg_at_end",
                        0));
                sb.append(perSide(
                        r,
                        "slow readers' produce byte rate B/s at each round's end (the quota's window)",
                        "slow_reader_quota_byte_rate_at_end",
                        0));
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "  kpipe at each round's end: held responses %s, requests in flight %s%n",
                    stat(r.stat(Variant.KPIPE, x -> extra(x, "kpipe_held_responses_at_end")), 0),
                    stat(r.stat(Variant.KPIPE, x -> extra(x, "kpipe_inflight_requests_at_end")), 0)));
            if (r.hasPairs()) {
                sb.append(String.format(
                        Locale.ROOT,
                        "  kpipe/stock   longest ack gap %s   p99 ack gap %s   records/s %s%n",
                        ratio(r.ratio(x -> extra(x, "ack_gap_max_ms"))),
                        ratio(r.ratio(x -> extra(x, "ack_gap_p99_ms"))),
                        ratio(r.ratio(RoundResult::recordsPerSec))));
            }
        }
        if (r.scenario().isS10()) {
            sb.append(perSide(
                    r, "leader heap per connection B (class histogram)", "leader_heap_per_connection_bytes", 0));
            sb.append(perSide(r, "leader CPU us/produce request", "leader_cpu_us_per_produce_request", 1));
            sb.append(String.format(
                    Locale.ROOT,
                    "  heap per connection kpipe - stock per round pair: %s B%n",
                    stat(heapDifference(r), 0)));
            sb.append(String.format(
                    Locale.ROOT,
                    "  kpipe connection dump (JMX read, wall): %s ms, %s chars; pipelined connections %s%n",
                    stat(r.stat(Variant.KPIPE, x -> extra(x, "kpipe_connection_dump_ms")), 1),
                    stat(r.stat(Variant.KPIPE, x -> extra(x, "kpipe_connection_dump_chars")), 0),
                    stat(r.stat(Variant.KPIPE, x -> extra(x, "kpipe_pipelined_connections")), 0)));
            if (r.hasPairs()) {
                sb.append(String.format(
                        Locale.ROOT,
                        "  kpipe/stock   leader CPU/request %s%n",
                        ratio(r.ratio(x -> extra(x, "leader_cpu_us_per_produce_request")))));
            }
        }
        return sb.toString();
    }

    /**
     * @param r an S9 or S10 report with both sides
     * @return its targets
     */
    static List<Map<String, Object>> targets(Report r) {
        List<Map<String, Object>> l = new ArrayList<>();
        if (r.scenario().isS9()) {
            Stat g = r.ratio(x -> extra(x, "ack_gap_max_ms"));
            l.add(Report.target(
                    "longest ack gap kpipe/stock <= " + S9_MAX_GAP_RATIO,
                    g.median(),
                    g.median() <= S9_MAX_GAP_RATIO,
                    "x"));
            if (r.scenario().isFixedLoad()) { // --s9-good-rate: the gap compares equal work only if both delivered it
                double offered = r.scenario().offeredRecordsPerSec;
                Stat s = r.stat(Variant.STOCK, x -> x.recordsPerSec() / offered);
                l.add(Report.target(
                        "stock records/s >= " + Report.S2_MIN_THROUGHPUT_RATIO
                                + " x offered (both sides carried the same work)",
                        s.median(),
                        s.median() >= Report.S2_MIN_THROUGHPUT_RATIO,
                        "x"));
            }
        }
        if (r.scenario().isS11()) {
            Stat p = r.ratio(x -> extra(x, "excluded_p99_ms"));
            l.add(Report.target(
                    "excluded producers' p99 kpipe/stock <= " + Report.S8_MAX_P99_RATIO,
                    p.median(),
                    p.median() <= Report.S8_MAX_P99_RATIO,
                    "x"));
            Stat c = r.ratio(Report::cpuPerRequest);
            l.add(Report.target(
                    "broker CPU/produce request kpipe/stock <= " + Report.S8_MAX_CPU_PER_REQUEST_RATIO,
                    c.median(),
                    c.median() <= Report.S8_MAX_CPU_PER_REQUEST_RATIO,
                    "x"));
        }
        if (r.scenario().isS10()) {
            Stat d = heapDifference(r);
            l.add(Report.target(
                    "heap per idle pipelined connection kpipe - stock <= " + (int) S10_MAX_HEAP_DIFF_BYTES + " B",
                    d.median(),
                    d.median() <= S10_MAX_HEAP_DIFF_BYTES,
                    "B"));
        }
        return l;
    }

    /** S10: heap per connection, kpipe minus stock, per round pair (round i of each side). */
    static Stat heapDifference(Report r) {
        List<RoundResult> stock = r.rounds(Variant.STOCK);
        List<RoundResult> kpipe = r.rounds(Variant.KPIPE);
        List<Double> d = new ArrayList<>();
        for (int i = 0; i < Math.min(stock.size(), kpipe.size()); i++) {
            d.add(extra(kpipe.get(i), "leader_heap_per_connection_bytes")
                    - extra(stock.get(i), "leader_heap_per_connection_bytes"));
        }
        return Stat.of(d);
    }

    private static String perSide(Report r, String what, String key, int decimals) {
        return String.format(
                Locale.ROOT,
                "  %s: stock %s, kpipe %s%n",
                what,
                stat(r.stat(Variant.STOCK, x -> extra(x, key)), decimals),
                stat(r.stat(Variant.KPIPE, x -> extra(x, key)), decimals));
    }
}
