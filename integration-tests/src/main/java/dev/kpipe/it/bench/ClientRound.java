// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.RoundMetrics.brokerProduceRequests;
import static dev.kpipe.it.bench.RoundMetrics.kpipeMetric;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * One measured round of S1 with a producer that runs as a child process ({@link ClientProcess}: kcat, KafkaJS). What
 * the Java producer's round ({@link LoadRound}) reads from the client is read from the leader here, the same for every
 * client: records are the growth of partition 0's high watermark over the window (with {@code acks=all} and {@code
 * min.insync.replicas=2} a record is acknowledged once the watermark passes it), produce requests the leader's {@code
 * RequestMetrics} count, and on kpipe {@code inflight-requests-per-connection-max}. No latency figures (NaN).
 *
 * <p>Thread: the caller's; the client's standard input is fed by a thread of {@link ClientProcess}.
 */
final class ClientRound {
    private final Cluster cluster;
    private final Scenario scenario;
    private final Variant variant;
    private final int round;
    private final Progress progress;
    private final Path buildDir;

    ClientRound(Cluster cluster, Scenario scenario, Variant variant, int round, Progress progress, Path buildDir) {
        this.cluster = cluster;
        this.scenario = scenario;
        this.variant = variant;
        this.round = round;
        this.progress = progress;
        this.buildDir = buildDir;
    }

    /**
     * Runs the round: starts the client, measures over the window, stops the client.
     *
     * @param warmupSeconds load before the window, not measured
     * @param durationSeconds the measured window
     * @return the round's measurements; a client that ended before the window did is an error of the round
     */
    RoundResult run(int warmupSeconds, int durationSeconds) throws Exception {
        BenchClient client = scenario.client;
        String clientId = "bench-" + client.id + "-" + variant.label() + "-r" + round;
        Path dir = cluster.dir().resolve("client-" + variant.label() + "-r" + round);
        long start = System.nanoTime();
        long windowStart = start + Duration.ofSeconds(warmupSeconds).toNanos();
        long windowEnd = windowStart + Duration.ofSeconds(durationSeconds).toNanos();
        KafkaNode leader = cluster.node(1);
        long hw0 = highWatermark();
        try (ClientProcess p =
                ClientProcess.start(client, scenario, cluster.bootstrapServers(), clientId, buildDir, dir)) {
            progress.phase("warm-up", start, warmupSeconds, () -> progressCount(hw0));
            sleepUntil(windowStart, p);
            long t0 = System.nanoTime();
            long w0 = highWatermark();
            double req0 = brokerProduceRequests(leader);
            progress.phase("measuring", windowStart, durationSeconds, () -> progressCount(hw0));
            sleepUntil(windowEnd, p);
            long t1 = System.nanoTime();
            long w1 = highWatermark();
            double req1 = brokerProduceRequests(leader);
            boolean ranThrough = p.alive();
            long errorLines = p.errorLines();
            String exit = ranThrough ? null : p.describeExit();
            double seconds = (t1 - t0) / 1e9;
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("client", client.id);
            extra.put("client_settings", client.describe());
            extra.put("broker_produce_requests_per_s", (req1 - req0) / seconds);
            if (variant == Variant.KPIPE) {
                extra.put(
                        "kpipe_inflight_requests_per_connection_max",
                        kpipeMetric(leader, "inflight-requests-per-connection-max"));
            }
            extra.put("client_output", dir.toString());
            extra.put(
                    "load_average_1m_at_end",
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                            .getSystemLoadAverage());
            long records = w1 - w0;
            return new RoundResult(
                    scenario.label,
                    variant,
                    round,
                    durationSeconds,
                    records,
                    records / seconds,
                    (req1 - req0) / seconds,
                    Double.NaN,
                    Double.NaN,
                    Double.NaN,
                    Double.NaN,
                    Double.NaN,
                    (ranThrough ? 0 : 1) + errorLines,
                    exit != null ? client.id + " ended before the window did: " + exit : null,
                    extra);
        }
    }

    /** @return partition 0's high watermark on the leader (Kafka's {@code ListOffsets} latest) */
    private long highWatermark() {
        TopicPartition tp = new TopicPartition(scenario.topic, 0);
        try {
            ListOffsetsResult r = cluster.admin().listOffsets(Map.of(tp, OffsetSpec.latest()));
            return r.partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the high watermark of " + tp + ": " + e, e);
        }
    }

    /** @return records acknowledged since {@code from}, for the progress line (thread: the progress printer's) */
    private long progressCount(long from) {
        try {
            return highWatermark() - from;
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Sleeps until {@code nanoTime}, or until the client ends early. */
    private static void sleepUntil(long nanoTime, ClientProcess p) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0 && p.alive()) {
            Thread.sleep(Math.max(1, Math.min(left / 1_000_000, 200)));
        }
    }

    /** @return the clients a run needs prepared, each once */
    static List<BenchClient> external(List<Scenario> scenarios) {
        return scenarios.stream()
                .filter(Scenario::isChildProcessClient)
                .map(s -> s.client)
                .distinct()
                .toList();
    }
}
