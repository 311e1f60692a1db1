// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One round of S9: the scenario's good producer ({@link LoadRound}, which also times the gaps between its
 * acknowledgements) beside {@link SlowReaders} connected to the leader for the whole round. The slow readers' window
 * is the producer's to within the producers' creation. Caller's thread; the slow readers have their own.
 */
final class S9Round {
    /**
     * kpipe's gauges read at the round's end, the slow readers still connected: what their unread responses hold; and
     * the count of waits for {@code undrained} since the broker started.
     */
    static final List<String> KPIPE_GAUGES = List.of(
            "wait-undrained-total",
            "held-responses",
            "inflight-requests",
            "inflight-bytes",
            "pipelined-connections",
            "budget-waiting-connections");

    /** A slow reader that completed no write in the window's last second is stalled. */
    static final long STALLED_NANOS = 1_000_000_000L;

    private final Cluster cluster;
    private final Scenario scenario;
    private final Variant variant;
    private final int round;
    private final Progress progress;

    S9Round(Cluster cluster, Scenario scenario, Variant variant, int round, Progress progress) {
        this.cluster = cluster;
        this.scenario = scenario;
        this.variant = variant;
        this.round = round;
        this.progress = progress;
    }

    /**
     * Runs the round; blocks for about warm-up + duration + the producer's close.
     *
     * @param warmupSeconds load before the window, not measured
     * @param durationSeconds the measured window
     * @return the good producer's round with the slow readers' figures ({@code slow_reader_*}) and, on kpipe, {@link
     *     #KPIPE_GAUGES} at the end ({@code kpipe_*_at_end})
     * @throws IOException if a slow reader cannot connect
     * @throws InterruptedException if interrupted
     */
    RoundResult run(int warmupSeconds, int durationSeconds) throws IOException, InterruptedException {
        KafkaNode leader = cluster.node(1);
        long windowStart = System.nanoTime() + Duration.ofSeconds(warmupSeconds).toNanos();
        long windowEnd = windowStart + Duration.ofSeconds(durationSeconds).toNanos();
        try (SlowReaders readers = SlowReaders.start(
                leader.port(),
                scenario.sideTopic,
                scenario.slowReaders,
                scenario.slowReadersActive,
                windowStart,
                windowEnd)) {
            RoundResult r =
                    new LoadRound(cluster, scenario, variant, round, progress).run(warmupSeconds, durationSeconds);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("slow_reader_requests_written", (double) readers.writtenInWindow());
            m.put("slow_reader_requests_written_per_s", readers.writtenInWindow() / (double) durationSeconds);
            m.put("slow_reader_requests_written_whole_round", (double) readers.written());
            m.put("slow_readers_stalled_at_window_end", (double) readers.stalledAtWindowEnd(STALLED_NANOS));
            m.put("slow_reader_connections_ended", (double) readers.failures());
            if (scenario.slowReadersActive) {
                m.put("slow_reader_reconnects", (double) readers.reconnects());
                m.put("slow_reader_reconnects_in_window", (double) readers.reconnectsInWindow());
            }
            double throttle = SlowReaderQuota.brokerFigure(leader, "throttle-time");
            if (!Double.isNaN(throttle)) { // Kafka records quota sensors only with a quota set
                m.put("slow_reader_quota_throttle_ms_avg_at_end", throttle);
                m.put("slow_reader_quota_byte_rate_at_end", SlowReaderQuota.brokerFigure(leader, "byte-rate"));
            }
            if (readers.firstFailure() != null) {
                m.put("slow_reader_first_failure", readers.firstFailure());
            }
            if (variant == Variant.KPIPE) {
                for (String g : KPIPE_GAUGES) {
                    m.put("kpipe_" + g.replace('-', '_') + "_at_end", RoundMetrics.kpipeMetric(leader, g));
                }
            }
            return r.withExtra(m);
        }
    }
}
