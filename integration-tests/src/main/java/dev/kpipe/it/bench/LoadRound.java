// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.RoundMetrics.brokerMaxProduceRequestBytes;
import static dev.kpipe.it.bench.RoundMetrics.brokerProduceRequests;
import static dev.kpipe.it.bench.RoundMetrics.budgetMetrics;
import static dev.kpipe.it.bench.RoundMetrics.clientMetrics;
import static dev.kpipe.it.bench.RoundMetrics.counter;
import static dev.kpipe.it.bench.RoundMetrics.kpipeMetric;
import static dev.kpipe.it.bench.RoundMetrics.sum;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * One measured round of a scenario against one running cluster: creates the scenario's producers, runs them flat out
 * for warm-up plus the measured window, and collects the result.
 *
 * <p>Threads: the caller's thread samples metrics at the window edges; one sending thread per producer calls {@code
 * send()} in a loop (blocking when {@code buffer.memory} is full); each producer's I/O thread runs the callbacks that
 * time every record. A record counts in the window if its acknowledgement arrives in [window start, window end);
 * its latency is send() call to callback, in microseconds.
 */
final class LoadRound {
    /** The leader of every benchmark partition, as the producer's per-node metrics name it. */
    static final String LEADER_NODE_TAG = "node-1";

    private final Cluster cluster;
    private final Scenario scenario;
    private final Variant variant;
    private final int round;
    private final Progress progress;
    /** S1L: the leader's figures sampled in the middle of the window ({@link BrokerProbe#midWindow}). */
    private Map<String, Object> midWindow = Map.of();

    LoadRound(Cluster cluster, Scenario scenario, Variant variant, int round, Progress progress) {
        this.cluster = cluster;
        this.scenario = scenario;
        this.variant = variant;
        this.round = round;
        this.progress = progress;
    }

    /** Counters read at one edge of the measured window. */
    private record Snapshot(
            long nanos,
            double leaderResponses,
            double leaderRequests,
            double allRequests,
            long brokerNanos,
            double brokerProduceRequests,
            double brokerSelects,
            double pipelinedRequests,
            double processorWakeups,
            double inflightMax,
            double followerFetches,
            double replicationBytesOut) {}

    /**
     * Runs the round; blocks for about warm-up + duration + the producers' close.
     *
     * @param warmupSeconds load before the window, not measured
     * @param durationSeconds the measured window
     * @return the round's measurements
     * @throws InterruptedException if interrupted (producers are closed)
     */
    RoundResult run(int warmupSeconds, int durationSeconds) throws InterruptedException {
        byte[] value = new byte[scenario.recordBytes];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) ('a' + i % 26);
        }
        long start = System.nanoTime();
        long windowStart = start + Duration.ofSeconds(warmupSeconds).toNanos();
        long windowEnd = windowStart + Duration.ofSeconds(durationSeconds).toNanos();
        List<LoadSender> senders = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < scenario.allProducers(); i++) {
                String clientId = "bench-" + scenario.id + "-" + variant.label() + "-r" + round + "-p" + i;
                KafkaProducer<byte[], byte[]> p =
                        new KafkaProducer<>(scenario.producerConfig(cluster.bootstrapServers(), clientId, variant));
                double rate = scenario.offeredRecordsPerSecOf(i);
                RatePacer pacer = rate > 0 ? new RatePacer(rate, start) : null;
                senders.add(new LoadSender(
                        p,
                        scenario.topicOf(i),
                        scenario.partitionOf(i),
                        value,
                        windowStart,
                        windowEnd,
                        pacer,
                        scenario.commitEvery));
            }
            for (int i = 0; i < senders.size(); i++) {
                Thread t = new Thread(senders.get(i), "bench-sender-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            HeapSampler heap = new HeapSampler(cluster.node(1));
            heap.start();
            CpuSampler cpu = new CpuSampler(cluster.nodes().stream()
                    .map(KafkaNode::pid)
                    .filter(p -> p > 0)
                    .toList());
            progress.phase("warm-up", start, warmupSeconds, () -> acked(senders));
            BrokerThreads leaderThreads = BrokerThreads.of(cluster.node(1).pid());
            RoundResult.sleepUntil(windowStart);
            // The leader alone (node 1): with a follower, the cluster's CPU also holds the follower's fetching, which
            // follows the fetch rate, not the produce requests.
            CpuSampler leaderCpu = new CpuSampler(
                    Stream.of(cluster.node(1).pid()).filter(p -> p > 0).toList());
            CpuSampler.Reading c0 = cpu.read();
            CpuSampler.Reading l0 = leaderCpu.read();
            BrokerThreads.Reading t0 = leaderThreads.read();
            Snapshot s0 = snapshot(senders);
            progress.phase("measuring", windowStart, durationSeconds, () -> acked(senders));
            if (scenario.id.equals(
                    "S1L")) { // where the time goes: the leader's purgatory and kpipe's connections mid-window
                RoundResult.sleepUntil(windowStart + (windowEnd - windowStart) / 2);
                midWindow = BrokerProbe.midWindow(cluster.node(1), variant == Variant.KPIPE);
            }
            RoundResult.sleepUntil(windowEnd);
            CpuSampler.Reading c1 = cpu.read();
            CpuSampler.Reading l1 = leaderCpu.read();
            BrokerThreads.Reading t1 = leaderThreads.read();
            Snapshot s1 = snapshot(senders);
            Map<String, Double> clientEnd = clientMetrics(senders);
            clientEnd.putAll(leaderThreads.perRequest(t0, t1, s1.brokerProduceRequests - s0.brokerProduceRequests));
            double[] cores = CpuSampler.cores(c0, c1);
            clientEnd.put("cpu_cores_bench_jvm", cores[0]);
            clientEnd.put("cpu_cores_brokers_under_test", cores[1]);
            clientEnd.put("cpu_cores_leader", CpuSampler.cores(l0, l1)[1]);
            clientEnd.put("cpu_cores_other_processes", cores[2]);
            clientEnd.put("cpu_cores_irq_softirq", cores[3]);
            clientEnd.put("cpu_cores_steal", cores[4]);
            progress.phase("draining", windowEnd, 0, () -> acked(senders));
            for (Thread t : threads) {
                t.join(Duration.ofSeconds(90).toMillis());
            }
            heap.stop();
            clientEnd.putAll(heap.result());
            if ((scenario.isS3() || scenario.id.equals("S1L")) && variant == Variant.KPIPE) {
                clientEnd.putAll(budgetMetrics(cluster.node(1)));
            }
            if (scenario.isS3()) {
                clientEnd.put("broker_produce_request_bytes_max", brokerMaxProduceRequestBytes(cluster.node(1)));
            }
            closeAll(senders); // joins the I/O threads: every callback has run and the histograms are safe to read
            return result(senders, s0, s1, clientEnd, durationSeconds);
        } finally {
            for (Thread t : threads) {
                t.interrupt();
            }
            closeAll(senders);
        }
    }

    private static void closeAll(List<LoadSender> senders) {
        for (LoadSender s : senders) {
            if (!s.closed) {
                s.closed = true;
                s.producer.close(Duration.ofSeconds(60));
            }
        }
    }

    private RoundResult result(
            List<LoadSender> senders, Snapshot s0, Snapshot s1, Map<String, Double> clientEnd, int durationSeconds) {
        LatencyHistogram h = new LatencyHistogram();
        long errors = 0;
        Exception firstError = null;
        for (LoadSender s : senders) {
            h.add(s.histogram);
            errors += s.errors.get();
            if (firstError == null) {
                firstError = s.firstError.get();
            }
        }
        double seconds = (s1.nanos - s0.nanos) / 1e9;
        Map<String, Object> extra = new LinkedHashMap<>(clientEnd);
        extra.putAll(midWindow);
        if (scenario.isFixedLoad()) {
            extra.put("offered_records_per_s", (double) scenario.offeredRecordsPerSec + scenario.excludedRecordsPerSec);
        }
        if (scenario.windowMs > 0) {
            double fetches = (s1.followerFetches - s0.followerFetches) / seconds;
            extra.put("leader_follower_fetches_per_s", fetches);
            extra.put(
                    "leader_replication_bytes_out_per_s", (s1.replicationBytesOut - s0.replicationBytesOut) / seconds);
            extra.put(
                    "leader_replication_bytes_per_follower_fetch",
                    fetches > 0 ? (s1.replicationBytesOut - s0.replicationBytesOut) / seconds / fetches : Double.NaN);
        }
        if (senders.size() > 1) {
            long[] perProducer = senders.stream()
                    .mapToLong(s -> s.histogram.count())
                    .sorted()
                    .toArray();
            double median = perProducer.length % 2 == 1
                    ? perProducer[perProducer.length / 2]
                    : (perProducer[perProducer.length / 2 - 1] + perProducer[perProducer.length / 2]) / 2.0;
            extra.put("producer_records_min", (double) perProducer[0]);
            extra.put("producer_records_median", median);
            extra.put("producer_records_max", (double) perProducer[perProducer.length - 1]);
            extra.put("slowest_producer_share_of_median", median > 0 ? perProducer[0] / median : Double.NaN);
        }
        if (scenario.isS9()) { // one good producer: the longest wait between two of its acknowledgements
            LatencyHistogram gaps = new LatencyHistogram();
            long maxGap = 0;
            for (LoadSender s : senders) {
                gaps.add(s.ackGaps);
                maxGap = Math.max(maxGap, s.ackGapMaxNanos);
            }
            extra.put("ack_gap_max_ms", maxGap / 1e6);
            extra.put("ack_gap_p99_ms", gaps.count() > 0 ? gaps.percentileMicros(99) / 1000.0 : Double.NaN);
            extra.put("ack_gaps_over_0_1_ms", (double) gaps.count());
        }
        if (scenario.isS11()) { // the two groups apart: excluded (stock's path on kpipe) and pipelined
            LatencyHistogram excluded = new LatencyHistogram();
            LatencyHistogram pipelined = new LatencyHistogram();
            for (int i = 0; i < senders.size(); i++) {
                (scenario.isExcluded(i) ? excluded : pipelined).add(senders.get(i).histogram);
            }
            groupFigures(extra, "excluded", excluded, seconds);
            groupFigures(extra, "pipelined", pipelined, seconds);
        }
        if (scenario.isS5()) {
            long commits =
                    senders.stream().mapToLong(s -> s.commitsInWindow.get()).sum();
            extra.put("transactions_committed_per_s", commits / seconds);
            extra.put("committed_records_per_s", commits * scenario.commitEvery / seconds);
        }
        extra.put("producer_leader_requests_sent_per_s", (s1.leaderRequests - s0.leaderRequests) / seconds);
        extra.put("producer_all_requests_sent_per_s", (s1.allRequests - s0.allRequests) / seconds);
        double brokerSeconds = (s1.brokerNanos - s0.brokerNanos) / 1e9;
        double brokerRequests = s1.brokerProduceRequests - s0.brokerProduceRequests;
        extra.put("broker_produce_requests_per_s", brokerRequests / brokerSeconds);
        extra.put(
                "broker_selects_per_produce_request",
                brokerRequests > 0 ? (s1.brokerSelects - s0.brokerSelects) / brokerRequests : Double.NaN);
        if (variant == Variant.KPIPE) {
            extra.put(
                    "kpipe_processor_wakeups_per_produce_request",
                    brokerRequests > 0 ? (s1.processorWakeups - s0.processorWakeups) / brokerRequests : Double.NaN);
            extra.put("kpipe_pipelined_requests_per_s", (s1.pipelinedRequests - s0.pipelinedRequests) / brokerSeconds);
            extra.put("kpipe_inflight_requests_per_connection_max", s1.inflightMax);
        }
        Object brokerCores = extra.get("cpu_cores_brokers_under_test");
        extra.put(
                "broker_cpu_us_per_record",
                brokerCores instanceof Double d && h.count() > 0 ? d * durationSeconds * 1e6 / h.count() : Double.NaN);
        // The same CPU (every broker JVM of the cluster under test over the window) per produce request the leader
        // received in the window (its RequestMetrics): a cost per request, apart from how many records a batch holds.
        extra.put(
                "broker_cpu_us_per_produce_request",
                brokerCores instanceof Double d && brokerRequests > 0
                        ? d * durationSeconds * 1e6 / brokerRequests
                        : Double.NaN);
        extra.put(
                "leader_cpu_us_per_produce_request",
                extra.get("cpu_cores_leader") instanceof Double d && brokerRequests > 0
                        ? d * durationSeconds * 1e6 / brokerRequests
                        : Double.NaN);
        extra.put(
                "load_average_1m_at_end",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        .getSystemLoadAverage());
        return RoundResult.fromHistogram(
                scenario.label,
                variant,
                round,
                durationSeconds,
                (s1.leaderResponses - s0.leaderResponses) / seconds,
                h,
                errors,
                firstError == null ? null : firstError.toString(),
                extra);
    }

    /** S11: one group's records/s and send-to-ack p50/p99, ms, as {@code <group>_records_per_s} etc. */
    private static void groupFigures(Map<String, Object> extra, String group, LatencyHistogram h, double seconds) {
        extra.put(group + "_records_per_s", h.count() / seconds);
        extra.put(group + "_p50_ms", h.count() > 0 ? h.percentileMicros(50) / 1000.0 : Double.NaN);
        extra.put(group + "_p99_ms", h.count() > 0 ? h.percentileMicros(99) / 1000.0 : Double.NaN);
    }

    private static long acked(List<LoadSender> senders) {
        long n = 0;
        for (LoadSender s : senders) {
            n += s.acked.get();
        }
        return n;
    }

    private Snapshot snapshot(List<LoadSender> senders) {
        long now = System.nanoTime();
        double responses = sum(senders, p -> counter(p, "producer-node-metrics", "response-total", LEADER_NODE_TAG));
        double leader = sum(senders, p -> counter(p, "producer-node-metrics", "request-total", LEADER_NODE_TAG));
        double all = sum(senders, p -> counter(p, "producer-metrics", "request-total", null));
        KafkaNode leaderNode = cluster.node(1);
        double brokerProduce = brokerProduceRequests(leaderNode);
        double brokerSelects = RoundMetrics.brokerSelects(leaderNode);
        long brokerNanos = System.nanoTime();
        double pipelined = Double.NaN;
        double wakeups = Double.NaN;
        double inflightMax = Double.NaN;
        if (variant == Variant.KPIPE) {
            pipelined = kpipeMetric(leaderNode, "pipelined-request-total");
            wakeups = kpipeMetric(leaderNode, "processor-wakeup-total");
            inflightMax = kpipeMetric(leaderNode, "inflight-requests-per-connection-max");
        }
        double fetches = Double.NaN;
        double replicationOut = Double.NaN;
        if (scenario.windowMs > 0) {
            fetches = BrokerProbe.count(
                    leaderNode, "kafka.network:type=RequestMetrics,name=RequestsPerSec," + "request=FetchFollower,*");
            replicationOut = BrokerProbe.count(
                    leaderNode, "kafka.server:type=BrokerTopicMetrics," + "name=ReplicationBytesOutPerSec");
        }
        return new Snapshot(
                now,
                responses,
                leader,
                all,
                brokerNanos,
                brokerProduce,
                brokerSelects,
                pipelined,
                wakeups,
                inflightMax,
                fetches,
                replicationOut);
    }
}
