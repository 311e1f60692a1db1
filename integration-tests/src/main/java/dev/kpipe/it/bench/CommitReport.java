// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.bench.Report.Stat;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Sums up the rounds of S6 or S7 ({@link CommitScenario}): per side the median [min–max] over rounds of each figure,
 * the ratios kpipe/stock and kpipe/kpipe-excl (per round pair, round i of each side, then median [min–max]), the
 * target, and for S7 the broker's requests per transaction. Not thread-safe (the benchmark's main thread).
 */
final class CommitReport {
    /** One row of the table: its label and the figure's key in {@link CommitResult#figures}. */
    record Row(String label, String key) {
        /** @return whether the ratio columns apply (not to kpipe's own gauges, which stock does not have) */
        boolean hasRatios() {
            return !key.startsWith("kpipe_");
        }
    }

    /** S6's rows. */
    static final List<Row> S6_ROWS = List.of(
            new Row("records/s consumed", "records_per_s"),
            new Row("commits/s requested (polls with records)", "commits_requested_per_s"),
            new Row("commits/s acknowledged", "commits_per_s"),
            new Row("records/s committed (offset advance)", "committed_records_per_s"),
            new Row("commit latency p50 ms", "commit_p50_ms"),
            new Row("commit latency p99 ms", "commit_p99_ms"),
            new Row("broker OFFSET_COMMIT/s", "broker_OffsetCommit_per_s"),
            new Row("broker OFFSET_COMMIT mean ms", "broker_OffsetCommit_ms"),
            new Row("kpipe commits in flight per connection, max", "kpipe_inflight_offset_commit_per_connection_max"),
            new Row("other processes, cores", "cpu_cores_other_processes"));

    /** S7's rows. */
    static final List<Row> S7_ROWS = List.of(
            new Row("records/s (committed input offsets)", "records_per_s"),
            new Row("transactions/s", "transactions_per_s"),
            new Row("records per transaction", "records_per_transaction"),
            new Row("other processes, cores", "cpu_cores_other_processes"));

    private final CommitScenario scenario;
    private final Map<CommitSide, List<CommitResult>> results = new EnumMap<>(CommitSide.class);

    CommitReport(CommitScenario scenario) {
        this.scenario = scenario;
        for (CommitSide s : scenario.sides()) {
            results.put(s, new ArrayList<>());
        }
    }

    /**
     * @param r a round's result
     * @throws IllegalArgumentException if its side is not one of the scenario's
     */
    void add(CommitResult r) {
        List<CommitResult> l = results.get(r.side());
        if (l == null) {
            throw new IllegalArgumentException(
                    scenario.id() + " has no side " + r.side().label());
        }
        l.add(r);
    }

    /** @return the scenario's rows */
    List<Row> rows() {
        return scenario.isStreams() ? S7_ROWS : S6_ROWS;
    }

    /**
     * @param side a side
     * @param key a figure
     * @return its median [min..max] over the side's rounds
     */
    Stat stat(CommitSide side, String key) {
        return Stat.of(results.get(side).stream().map(r -> r.figure(key)).toList());
    }

    /**
     * @param side the numerator's side
     * @param base the denominator's side
     * @param key a figure
     * @return side/base per round pair (round i of each; pairs up to the shorter list), then median [min..max]; NaN
     *     if a side has no rounds
     */
    Stat ratio(CommitSide side, CommitSide base, String key) {
        List<CommitResult> a = results.getOrDefault(side, List.of());
        List<CommitResult> b = results.getOrDefault(base, List.of());
        List<Double> r = new ArrayList<>();
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            r.add(a.get(i).figure(key) / b.get(i).figure(key));
        }
        return Stat.of(r);
    }

    /** @return the target's ratio (median of round pairs) */
    Stat targetRatio() {
        return ratio(CommitSide.KPIPE, scenario.targetBaseline(), scenario.targetFigure());
    }

    /** @return whether the target is met (median ratio at least {@link CommitScenario#targetRatio()}) */
    boolean targetMet() {
        return targetRatio().median() >= scenario.targetRatio();
    }

    /** @return the table: one row per figure, one column per side, then the ratios; the target line; S7's requests */
    String table(BenchOptions o) {
        StringBuilder sb = new StringBuilder();
        List<CommitSide> sides = scenario.sides();
        boolean excl = sides.contains(CommitSide.KPIPE_EXCL);
        int rounds = results.get(CommitSide.STOCK).size();
        sb.append(scenario.headline(o)).append('\n');
        sb.append(String.format(
                Locale.ROOT,
                "median [min–max] of %d round(s) x %d s per side%n",
                rounds,
                rounds == 0 ? 0 : results.get(CommitSide.STOCK).get(0).durationSeconds()));
        sb.append("| figure |");
        for (CommitSide s : sides) {
            sb.append(' ').append(s.label()).append(" |");
        }
        sb.append(" kpipe/stock |");
        if (excl) {
            sb.append(" kpipe/kpipe-excl |");
        }
        sb.append('\n').append("|---|");
        sb.append("---|".repeat(sides.size() + (excl ? 2 : 1)));
        sb.append('\n');
        for (Row row : rows()) {
            sb.append("| ").append(row.label()).append(" |");
            for (CommitSide s : sides) {
                sb.append(' ').append(range(stat(s, row.key()), "")).append(" |");
            }
            sb.append(' ').append(ratioCell(CommitSide.STOCK, row)).append(" |");
            if (excl) {
                sb.append(' ').append(ratioCell(CommitSide.KPIPE_EXCL, row)).append(" |");
            }
            sb.append('\n');
        }
        long errors = results.values().stream()
                .flatMap(List::stream)
                .mapToLong(CommitResult::errors)
                .sum();
        sb.append(String.format(
                Locale.ROOT,
                "target: %s kpipe/%s >= %sx: %s -> %s; errors in all rounds: %d%n",
                scenario.targetFigure().replace("_per_s", "/s").replace('_', ' '),
                scenario.targetBaseline().label(),
                new java.math.BigDecimal(Double.toString(scenario.targetRatio()))
                        .stripTrailingZeros()
                        .toPlainString(), // 1.25, not Report.fmt's 1.3
                range(targetRatio(), "x"),
                targetMet() ? "MET" : "MISSED",
                errors));
        if (scenario.isStreams()) {
            sb.append(requestsPerTransaction());
        }
        return sb.toString();
    }

    private String ratioCell(CommitSide base, Row row) {
        return row.hasRatios() ? range(ratio(CommitSide.KPIPE, base, row.key()), "x") : "—";
    }

    /**
     * S7's per-transaction request timeline, from the leader's request metrics over the windows: per API, requests
     * per transaction x their mean total time on the broker (queue + local + remote, the acks' wait included), median
     * over the rounds; the APIs in the order one transaction sends them. What pipelining can overlap is the produce
     * requests and TXN_OFFSET_COMMIT; ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN and END_TXN drain the connection on
     * every side.
     */
    String requestsPerTransaction() {
        StringBuilder sb = new StringBuilder();
        sb.append("per transaction on node 1 (requests per transaction x mean ms on the broker, median of rounds):\n");
        sb.append("| API |");
        for (CommitSide s : scenario.sides()) {
            sb.append(' ').append(s.label()).append(" |");
        }
        sb.append('\n')
                .append("|---|")
                .append("---|".repeat(scenario.sides().size()))
                .append('\n');
        for (String api : CommitRounds.APIS) {
            sb.append("| ").append(api).append(" |");
            for (CommitSide s : scenario.sides()) {
                double perTxn = stat(s, "broker_" + api + "_per_txn").median();
                double ms = stat(s, "broker_" + api + "_ms").median();
                sb.append(String.format(Locale.ROOT, " %.2f x %s ms |", perTxn, Report.fmt(round1(ms))));
            }
            sb.append('\n');
        }
        sb.append("| transaction period, ms |");
        for (CommitSide s : scenario.sides()) {
            double tps = stat(s, "transactions_per_s").median();
            sb.append(' ').append(Report.fmt(round1(1000 / tps))).append(" |");
        }
        sb.append('\n');
        return sb.toString();
    }

    /** @return the JSON summary: the description, every round, per side the stats, the ratios and the target */
    Map<String, Object> toMap(BenchOptions o) {
        Map<String, Object> m = new LinkedHashMap<>(scenario.describe(o));
        List<Object> rounds = new ArrayList<>();
        results.values().forEach(l -> l.forEach(r -> rounds.add(r.toMap())));
        m.put("rounds", rounds);
        Map<String, Object> summary = new LinkedHashMap<>();
        for (CommitSide s : scenario.sides()) {
            Map<String, Object> side = new LinkedHashMap<>();
            for (Row row : rows()) {
                side.put(row.key(), stat(s, row.key()).toMap());
            }
            summary.put(s.label(), side);
        }
        for (Row row : rows()) {
            summary.put(
                    "kpipe_over_stock_" + row.key(),
                    ratio(CommitSide.KPIPE, CommitSide.STOCK, row.key()).toMap());
            if (scenario.sides().contains(CommitSide.KPIPE_EXCL)) {
                summary.put(
                        "kpipe_over_kpipe_excl_" + row.key(),
                        ratio(CommitSide.KPIPE, CommitSide.KPIPE_EXCL, row.key())
                                .toMap());
            }
        }
        summary.put("target_ratio", targetRatio().toMap());
        summary.put("target_met", targetMet());
        m.put("summary", summary);
        return m;
    }

    /** @return {@code median [min–max]} with one decimal below 100, none above; "—" if not measured */
    static String range(Stat s, String unit) {
        if (Double.isNaN(s.median())) {
            return "—";
        }
        return num(s.median()) + unit + " [" + num(s.min()) + "–" + num(s.max()) + "]";
    }

    private static String num(double d) {
        if (Double.isInfinite(d)) {
            return "∞";
        }
        return Math.abs(d) >= 100
                ? String.format(Locale.ROOT, "%,.0f", d)
                : String.format(Locale.ROOT, Math.abs(d) >= 10 ? "%.1f" : "%.2f", d);
    }

    private static double round1(double d) {
        return Math.round(d * 10) / 10.0;
    }
}
