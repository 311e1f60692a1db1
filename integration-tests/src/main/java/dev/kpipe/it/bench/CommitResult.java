// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What one round of S6 or S7 ({@link CommitScenario}) measured over its window. Immutable.
 *
 * @param scenario the scenario's label, e.g. {@code S6 W=100ms}
 * @param side the side
 * @param round 1-based round number
 * @param durationSeconds length of the measured window, s
 * @param figures the round's figures by key (rates per second over the window, latencies in ms; NaN where not
 *     measured): S6 {@code records_per_s} (consumed), {@code commits_per_s} (commit callbacks without error),
 *     {@code committed_records_per_s} (how fast the committed offset advanced), {@code commit_p50_ms},
 *     {@code commit_p99_ms}; S7 {@code records_per_s} (input records committed, from the group's committed offset),
 *     {@code transactions_per_s}; both the broker's {@code broker_<Api>_per_s} and {@code broker_<Api>_ms} (mean total
 *     time) for the APIs of {@link CommitRounds#APIS}
 * @param errors failed commits (S6) or stream-thread failures (S7) over the whole round
 * @param firstError the first failure, or null
 */
record CommitResult(
        String scenario,
        CommitSide side,
        int round,
        int durationSeconds,
        Map<String, Double> figures,
        long errors,
        String firstError) {

    /**
     * @param key a figure's key
     * @return its value, NaN if absent
     */
    double figure(String key) {
        Double d = figures.get(key);
        return d == null ? Double.NaN : d;
    }

    /**
     * @param more figures to add to (or replace in) {@link #figures}
     * @return this result with them
     */
    CommitResult withFigures(Map<String, Double> more) {
        Map<String, Double> m = new LinkedHashMap<>(figures);
        m.putAll(more);
        return new CommitResult(scenario, side, round, durationSeconds, m, errors, firstError);
    }

    /** @return the result as a JSON-ready map */
    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("side", side.label());
        m.put("round", round);
        m.put("duration_s", durationSeconds);
        m.putAll(figures);
        m.put("errors", errors);
        m.put("first_error", firstError);
        return m;
    }

    /** @return a one-line summary for the log */
    String line() {
        return String.format(
                Locale.ROOT,
                "%s round %d %-10s: %,9.0f records/s %7.1f commits/s %7.1f transactions/s  commit p50 %6.0f ms"
                        + "  p99 %6.0f ms  cpu other %.2f%s",
                scenario,
                round,
                side.label(),
                figure("records_per_s"),
                figure("commits_per_s"),
                figure("transactions_per_s"),
                figure("commit_p50_ms"),
                figure("commit_p99_ms"),
                figure("cpu_cores_other_processes"),
                LoadAverage.figures(figures) + (errors > 0 ? "  ERRORS " + errors + " (" + firstError + ")" : ""));
    }
}
