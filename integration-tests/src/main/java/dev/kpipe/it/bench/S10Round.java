// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.management.ObjectName;

/**
 * One round of S10 against one running broker: a class histogram of the broker (the baseline), then the scenario's
 * {@link RawConnections}, each upgraded by one produce request; one in ten ({@link #producing}) then produces 1
 * request/s (one driver thread, one round trip at a time, paced by {@link RatePacer}) through warm-up and the window,
 * the others idle. After the window the driver stops, a second histogram counts what the connections keep (all idle
 * now), kpipe's connection dump is read and timed, and the connections close.
 *
 * <p>Threads: the caller's, and the driver's; latencies are the driver's, read after it is joined.
 */
final class S10Round {
    /** Connection dump reads timed per kpipe round. */
    static final int DUMP_READS = 3;
    /** File descriptors the broker and this JVM need beside S10's connections (log segments, jars, sockets). */
    static final int FD_MARGIN = 1000;

    private final Cluster cluster;
    private final Scenario scenario;
    private final Variant variant;
    private final int round;
    private final Progress progress;

    S10Round(Cluster cluster, Scenario scenario, Variant variant, int round, Progress progress) {
        this.cluster = cluster;
        this.scenario = scenario;
        this.variant = variant;
        this.round = round;
        this.progress = progress;
    }

    /**
     * @param connections S10's connections
     * @return how many of them produce after their first request: one in ten, at least one
     */
    static int producing(int connections) {
        return Math.max(1, connections / 10);
    }

    /**
     * Runs the round; blocks for about the two histograms, the connects, warm-up and duration.
     *
     * @param warmupSeconds load before the window, not measured
     * @param durationSeconds the measured window
     * @return the round: records = produce requests acknowledged in the window (one record each), latency per round
     *     trip, and in {@link RoundResult#extra} the heap per connection, the leader's CPU per produce request, the
     *     file-descriptor limits and (kpipe) the connection dump's cost
     * @throws IOException if the file-descriptor limit is too low, jcmd fails or a connection cannot be opened
     * @throws InterruptedException if interrupted
     */
    RoundResult run(int warmupSeconds, int durationSeconds) throws Exception {
        KafkaNode node = cluster.node(1);
        long pid = node.pid();
        int n = scenario.connections;
        Map<String, Object> extra = new LinkedHashMap<>(FdLimits.check(pid, n + FD_MARGIN));
        progress.phase("heap histogram (baseline)", System.nanoTime(), 0, () -> 0);
        ClassHistogram before = ClassHistogram.of(pid);
        long t0 = System.nanoTime();
        progress.phase("connecting " + n, t0, 0, () -> 0);
        try (RawConnections conns = RawConnections.open(node.port(), n, scenario.topic, scenario.recordBytes)) {
            extra.put("connect_and_first_produce_s", (System.nanoTime() - t0) / 1e9);
            long start = System.nanoTime();
            long windowStart = start + Duration.ofSeconds(warmupSeconds).toNanos();
            long windowEnd = windowStart + Duration.ofSeconds(durationSeconds).toNanos();
            Driver driver = new Driver(conns, producing(n), start, windowStart, windowEnd);
            Thread t = new Thread(driver, "bench-s10-driver");
            t.setDaemon(true);
            t.start();
            progress.phase("warm-up", start, warmupSeconds, driver.acked::get);
            RoundResult.sleepUntil(windowStart);
            CpuSampler cpu = new CpuSampler(List.of(pid));
            CpuSampler.Reading c0 = cpu.read();
            double req0 = RoundMetrics.brokerProduceRequests(node);
            progress.phase("measuring", windowStart, durationSeconds, driver.acked::get);
            RoundResult.sleepUntil(windowEnd);
            CpuSampler.Reading c1 = cpu.read();
            double requests = RoundMetrics.brokerProduceRequests(node) - req0;
            driver.stop = true;
            t.join(Duration.ofSeconds(30).toMillis());
            double[] cores = CpuSampler.cores(c0, c1);
            extra.put("cpu_cores_bench_jvm", cores[0]);
            extra.put("cpu_cores_brokers_under_test", cores[1]);
            extra.put("cpu_cores_leader", cores[1]);
            extra.put("cpu_cores_other_processes", cores[2]);
            extra.put("broker_produce_requests_per_s", requests / durationSeconds);
            double cpuPerRequest = requests > 0 ? cores[1] * durationSeconds * 1e6 / requests : Double.NaN;
            extra.put("broker_cpu_us_per_produce_request", cpuPerRequest);
            extra.put("leader_cpu_us_per_produce_request", cpuPerRequest);
            extra.put("broker_cpu_us_per_record", cpuPerRequest); // one record per request
            progress.phase("heap histogram (" + n + " idle connections)", System.nanoTime(), 0, () -> 0);
            ClassHistogram after = ClassHistogram.of(pid);
            extra.put("leader_live_heap_before_bytes", (double) before.totalBytes());
            extra.put("leader_live_heap_with_connections_bytes", (double) after.totalBytes());
            extra.put("leader_heap_per_connection_bytes", (after.totalBytes() - before.totalBytes()) / (double) n);
            extra.put("leader_heap_growth_top_classes", after.growthSince(before, 12));
            extra.put("broker_open_fds_with_connections", (double) FdLimits.openFds(pid));
            if (variant == Variant.KPIPE) {
                extra.put("kpipe_pipelined_connections", RoundMetrics.kpipeMetric(node, "pipelined-connections"));
                extra.putAll(dumpCost(node));
            }
            return result(driver, extra, durationSeconds);
        }
    }

    /** Reads kpipe's connection dump {@link #DUMP_READS} times over JMX: wall time of each read, and its size. */
    private static Map<String, Object> dumpCost(KafkaNode node) {
        Map<String, Object> m = new LinkedHashMap<>();
        List<Double> ms = new ArrayList<>();
        int chars = -1;
        try {
            ObjectName name = new ObjectName("kafka.server:type=kpipe-connections");
            for (int i = 0; i < DUMP_READS; i++) {
                long t0 = System.nanoTime();
                Object dump = node.jmx().getAttribute(name, "connection-dump");
                ms.add((System.nanoTime() - t0) / 1e6);
                chars = String.valueOf(dump).length();
            }
        } catch (Exception e) {
            m.put("kpipe_connection_dump_failure", e.toString());
        }
        Report.Stat s = Report.Stat.of(ms);
        m.put("kpipe_connection_dump_ms", s.median());
        m.put("kpipe_connection_dump_ms_max", s.max());
        m.put("kpipe_connection_dump_chars", (double) chars);
        return m;
    }

    private RoundResult result(Driver d, Map<String, Object> extra, int durationSeconds) {
        LatencyHistogram h = d.histogram;
        extra.put("producing_connections", (double) d.producing);
        return RoundResult.fromHistogram(
                scenario.label,
                variant,
                round,
                durationSeconds,
                h.count() / (double) durationSeconds,
                h,
                d.errors.get(),
                d.firstError.get(),
                extra);
    }

    /**
     * The producing connections' requests: connection 0, 10, 20, ... in turn, {@code producing} requests/s in all (1
     * per connection per second), one blocking round trip at a time. Own thread; the histogram is read after join.
     */
    private static final class Driver implements Runnable {
        final RawConnections conns;
        final int producing;
        final RatePacer pacer;
        final long windowStart;
        final long windowEnd;
        final LatencyHistogram histogram = new LatencyHistogram();
        final AtomicLong acked = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicReference<String> firstError = new AtomicReference<>();
        volatile boolean stop;
        private int next;

        Driver(RawConnections conns, int producing, long start, long windowStart, long windowEnd) {
            this.conns = conns;
            this.producing = producing;
            this.pacer = new RatePacer(producing, start);
            this.windowStart = windowStart;
            this.windowEnd = windowEnd;
        }

        @Override
        public void run() {
            while (!stop) {
                long now = System.nanoTime();
                long due = pacer.take(now);
                if (due == 0) {
                    LockSupport.parkNanos(Math.max(10_000, Math.min(pacer.nextDueNanos() - now, 1_000_000)));
                    continue;
                }
                for (long i = 0; i < due && !stop; i++) {
                    int c = (next++ % producing) * 10;
                    long sent = System.nanoTime();
                    try {
                        conns.roundTrip(Math.min(c, conns.size() - 1));
                    } catch (IOException | RuntimeException e) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, e.toString());
                        if (errors.get() > 100) {
                            return; // the connections are broken: the round reports its errors
                        }
                        continue;
                    }
                    long done = System.nanoTime();
                    acked.incrementAndGet();
                    if (done >= windowStart && done < windowEnd) {
                        histogram.record((done - sent) / 1000);
                    }
                }
            }
        }
    }
}
