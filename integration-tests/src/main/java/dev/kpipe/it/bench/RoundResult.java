// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one round measured over its window. Immutable.
 *
 * @param scenario scenario label, e.g. {@code S1 W=100ms}
 * @param variant stock or kpipe
 * @param round 1-based round number
 * @param durationSeconds length of the measured window in seconds
 * @param records records acknowledged without error inside the window
 * @param recordsPerSec {@code records / durationSeconds}
 * @param produceRequestsPerSec requests completed per second over the window on the producers' connections to the
 *     partition leader (node 1): the delta of the producers' {@code producer-node-metrics} {@code response-total}
 *     with {@code node-id=node-1} (responses received). In steady state all of them are Produce (metadata goes
 *     rarely, and is visible as a difference to the broker's count {@code broker_produce_requests_per_s} in {@link
 *     #extra}); requests sent are in {@code producer_leader_requests_sent_per_s}
 * @param p50Ms median send()-to-callback latency of the window's records, ms
 * @param p99Ms 99th percentile of the same, ms
 * @param p999Ms 99.9th percentile of the same, ms
 * @param maxMs maximum of the same, ms
 * @param meanMs mean of the same, ms
 * @param errors records whose send failed (the whole round, warm-up included)
 * @param firstError the first failure, or null
 * @param extra further client and broker figures, for the JSON
 */
record RoundResult(
        String scenario,
        Variant variant,
        int round,
        int durationSeconds,
        long records,
        double recordsPerSec,
        double produceRequestsPerSec,
        double p50Ms,
        double p99Ms,
        double p999Ms,
        double maxMs,
        double meanMs,
        long errors,
        String firstError,
        Map<String, Object> extra) {

    /** @return the result as a JSON-ready map */
    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("variant", variant.label());
        m.put("round", round);
        m.put("duration_s", durationSeconds);
        m.put("records", records);
        m.put("records_per_s", recordsPerSec);
        m.put("produce_requests_per_s", produceRequestsPerSec);
        m.put("records_per_produce_request", produceRequestsPerSec > 0 ? recordsPerSec / produceRequestsPerSec : null);
        m.put("latency_p50_ms", p50Ms);
        m.put("latency_p99_ms", p99Ms);
        m.put("latency_p999_ms", p999Ms);
        m.put("latency_max_ms", maxMs);
        m.put("latency_mean_ms", meanMs);
        m.put("errors", errors);
        m.put("first_error", firstError);
        m.putAll(extra);
        return m;
    }

    /**
     * A round's result from the latency histogram of its window's records.
     *
     * @param produceRequestsPerSec requests completed per second over the window
     * @param h the window's send()-to-acknowledgement latencies, one per record acknowledged in it
     * @return the result: records and percentiles from {@code h}
     */
    static RoundResult fromHistogram(
            String scenario,
            Variant variant,
            int round,
            int durationSeconds,
            double produceRequestsPerSec,
            LatencyHistogram h,
            long errors,
            String firstError,
            Map<String, Object> extra) {
        return new RoundResult(
                scenario,
                variant,
                round,
                durationSeconds,
                h.count(),
                h.count() / (double) durationSeconds,
                produceRequestsPerSec,
                h.percentileMicros(50) / 1000.0,
                h.percentileMicros(99) / 1000.0,
                h.percentileMicros(99.9) / 1000.0,
                h.maxMicros() / 1000.0,
                h.meanMicros() / 1000.0,
                errors,
                firstError,
                extra);
    }

    /**
     * Sleeps until {@code System.nanoTime()} reaches {@code nanoTime} (a round's window edge), in steps of at most 200 ms.
     *
     * @param nanoTime the {@code System.nanoTime()} to wait for
     * @throws InterruptedException if interrupted
     */
    static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, Math.min(left / 1_000_000, 200)));
        }
    }

    /**
     * @param more figures to add to (or replace in) {@link #extra}
     * @return this result with them
     */
    RoundResult withExtra(Map<String, ?> more) {
        Map<String, Object> m = new LinkedHashMap<>(extra);
        m.putAll(more);
        return new RoundResult(
                scenario,
                variant,
                round,
                durationSeconds,
                records,
                recordsPerSec,
                produceRequestsPerSec,
                p50Ms,
                p99Ms,
                p999Ms,
                maxMs,
                meanMs,
                errors,
                firstError,
                m);
    }

    /** @return a one-line summary for the log */
    String line() {
        return String.format(
                java.util.Locale.ROOT,
                "%s round %d %-5s: %,10.0f records/s %8.1f produce req/s  p50 %8.1f ms  p99 %8.1f ms  req-lat %6.1f ms"
                        + "  rec/req %5.1f  cpu bench/brokers/other %.2f/%.2f/%.2f%s",
                scenario,
                round,
                variant.label(),
                recordsPerSec,
                produceRequestsPerSec,
                p50Ms,
                p99Ms,
                num(extra.get("producer_request_latency_avg_ms")),
                recordsPerSec / produceRequestsPerSec,
                num(extra.get("cpu_cores_bench_jvm")),
                num(extra.get("cpu_cores_brokers_under_test")),
                num(extra.get("cpu_cores_other_processes")),
                (extra.get("leader_follower_fetches_per_s") instanceof Number f
                                ? String.format(
                                        java.util.Locale.ROOT,
                                        "  follower fetch/s %.1f, KiB/fetch %.0f",
                                        f.doubleValue(),
                                        num(extra.get("leader_replication_bytes_per_follower_fetch")) / 1024)
                                : "")
                        + RawLines.roundFigures(this)
                        + LoadAverage.figures(extra)
                        + (errors > 0 ? "  ERRORS " + errors + " (" + firstError + ")" : ""));
    }

    private static double num(Object o) {
        return o instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
