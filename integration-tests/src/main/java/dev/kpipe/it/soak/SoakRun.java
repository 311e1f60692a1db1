// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import static dev.kpipe.it.soak.SoakReport.clock;
import static dev.kpipe.it.soak.SoakReport.heapLine;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * The soak: mixed load for a long time on a 2-node kpipe cluster, then checks that nothing leaked and nothing went
 * wrong. Used by {@code BenchMain --scenario soak} (command line, default 20 minutes) and by {@code SoakIT} (CI,
 * 2 minutes); both run this code.
 *
 * <p>Load ({@link SoakWorkers}): idempotent acks=all producers with 5 requests in flight (pipelined by kpipe) to a
 * 6-partition topic led half by each broker, an acks=0 producer, two classic-protocol consumers of one group and one
 * consumer-protocol (KIP-848) consumer, and an admin client creating, describing and deleting topics, listing
 * offsets and describing groups in a loop; every {@link SoakOptions#restartEvery()} one of these clients, round
 * robin, is closed and created again.
 *
 * <p>Phases: warm-up load; all clients closed, kpipe's gauges awaited at 0 and each broker's heap read after a full
 * GC ("start"); load for {@link SoakOptions#duration()}; all clients closed, gauges awaited at 0, heap read again
 * ("end"); then the main topic is read back and each idempotent producer incarnation's records must be there
 * exactly once, in order, per partition. The checks ({@link Result#violations()}): zero client errors, every
 * record once and in order, gauges 0 at both quiet points, heap growth at most {@link
 * SoakOptions#maxHeapGrowthBytes()} per broker, no kpipe per-connection object left once every client is closed
 * (class histogram), no kpipe fault or classification fallback, pipelining happened on both
 * brokers, no ERROR line in the broker logs.
 *
 * <p>The heap bound is loose on purpose: stock Kafka's own state grows too under this load (request-metric
 * histogram reservoirs filling up to 1,028 samples each, producer state of every producer id kept for {@code
 * producer.id.expiration.ms}); {@code --stock} runs the same load without kpipe for comparison. The kpipe object
 * checks are the exact ones.
 *
 * <p>Runs on the calling thread, plus one thread per client. Not reusable: one {@link #run()} per instance.
 */
public final class SoakRun {
    private static final Duration GAUGE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(90);
    private final Cluster cluster;
    private final SoakOptions options;
    private final PrintStream log;
    private final SoakStats stats = new SoakStats();
    private final List<AtomicInteger> incarnations = new ArrayList<>();
    private final SoakChecks checks;
    private long restartCursor;

    /**
     * @param cluster a started cluster of {@link #clusterSpec} (2 nodes, kpipe enabled)
     * @param options what to run
     * @param log where progress lines go (e.g. {@code System.err})
     */
    public SoakRun(Cluster cluster, SoakOptions options, PrintStream log) {
        this.cluster = cluster;
        this.options = options;
        this.log = log;
        this.checks = new SoakChecks(options);
        for (int i = 0; i <= options.idempotentProducers(); i++) { // + the short-lived producer's slot
            incarnations.add(new AtomicInteger());
        }
    }

    /**
     * @param options the run's options (heap, Kafka version)
     * @return the soak cluster: 2 nodes (node 1 broker+controller, node 2 broker), kpipe installed and enabled (unless
     *     {@link SoakOptions#kpipe()} is false: stock Kafka)
     */
    public static ClusterSpec clusterSpec(SoakOptions options) {
        return ClusterSpec.builder()
                .name(options.kpipe() ? "soak" : "soak-stock")
                .nodes(2)
                .installPlugin(options.kpipe())
                .heap(options.brokerHeap())
                .kafkaVersion(options.kafkaVersion())
                .build();
    }

    /**
     * Runs the warm-up, the measured load and the checks; blocks for about warm-up + duration + a minute.
     *
     * @return what happened; {@link Result#violations()} is empty if every check passed
     * @throws Exception if the run could not be carried out (cluster or JMX failure), as opposed to a failed check
     */
    public Result run() throws Exception {
        long t0 = System.nanoTime();
        Map<Integer, List<Integer>> main = new TreeMap<>();
        for (int p = 0; p < SoakWorkers.PARTITIONS; p++) {
            main.put(p, p % 2 == 0 ? List.of(1, 2) : List.of(2, 1));
        }
        cluster.createTopics(
                List.of(
                        new NewTopic(SoakWorkers.TOPIC, main).configs(Map.of("min.insync.replicas", "2")),
                        new NewTopic(SoakWorkers.ACKS0_TOPIC, Map.of(0, List.of(1, 2), 1, List.of(2, 1)))),
                Duration.ofSeconds(60));
        Map<Integer, Long> errorLinesAtStart = errorLines();

        load("warm-up", options.warmup(), false);
        Map<Integer, Map<String, Double>> gaugesAfterWarmup = quiesce("after warm-up");
        Map<Integer, BrokerProbe.Heap> heapStart = heaps();
        Map<Integer, Double> upgradesAtStart = new TreeMap<>();
        for (KafkaNode n : cluster.nodes()) {
            upgradesAtStart.put(n.id(), options.kpipe() ? BrokerProbe.kpipe(n, "upgrade-total") : 0);
        }
        log.printf(Locale.ROOT, "soak: heap after full GC (start): %s%n", heapLine(heapStart));

        List<Map<Integer, BrokerProbe.Heap>> underLoad = load("load", options.duration(), true);
        Map<Integer, Map<String, Double>> gaugesAtEnd = quiesce("at the end");
        Map<Integer, BrokerProbe.Heap> heapEnd = heaps();
        log.printf(Locale.ROOT, "soak: heap after full GC (end): %s%n", heapLine(heapEnd));

        for (KafkaNode n : cluster.nodes()) {
            checks.kpipeObjects(n.id(), heapStart.get(n.id()), heapEnd.get(n.id()));
        }
        Map<Integer, Map<String, Double>> counters = new TreeMap<>();
        for (KafkaNode n : cluster.nodes()) {
            counters.put(n.id(), options.kpipe() ? BrokerProbe.kpipe(n, BrokerProbe.COUNTERS) : Map.of());
        }
        Map<Integer, Long> errorLinesAtEnd = errorLines();
        Map<Integer, Long> brokerErrorLines = new TreeMap<>();
        errorLinesAtEnd.forEach((id, c) -> brokerErrorLines.put(id, c - errorLinesAtStart.getOrDefault(id, 0L)));

        log.println("soak: reading back the main topic");
        long[] readBack = new SoakReadBack(cluster, stats, checks::violation).readBack();
        long acks0InLog = 0;
        for (long end : cluster
                .admin()
                .listOffsets(Map.of(
                        new TopicPartition(SoakWorkers.ACKS0_TOPIC, 0), OffsetSpec.latest(),
                        new TopicPartition(SoakWorkers.ACKS0_TOPIC, 1), OffsetSpec.latest()))
                .all()
                .get(30, TimeUnit.SECONDS)
                .values()
                .stream()
                .mapToLong(i -> i.offset())
                .toArray()) {
            acks0InLog += end;
        }

        for (KafkaNode n : cluster.nodes()) {
            int id = n.id();
            checks.broker(n, heapStart.get(id), heapEnd.get(id), counters.get(id), brokerErrorLines.get(id));
        }
        checks.clientErrors(stats);
        return new Result(
                options,
                cluster.kafkaVersion(),
                cluster.settings().pluginVersion(),
                stats,
                readBack[0],
                readBack[1],
                acks0InLog,
                heapStart,
                heapEnd,
                underLoad,
                gaugesAfterWarmup,
                gaugesAtEnd,
                counters,
                upgradesAtStart,
                brokerErrorLines,
                checks.violations(),
                checks.violationCount(),
                (System.nanoTime() - t0) / 1_000_000_000L);
    }

    /**
     * Runs every client for {@code length}, restarting one every {@link SoakOptions#restartEvery()}, printing progress,
     * and (if {@code sampleHeap} and the phase is at least 8 minutes) reading the heap after a full GC at each quarter.
     * Closes all clients at the end.
     */
    private List<Map<Integer, BrokerProbe.Heap>> load(String phase, Duration length, boolean sampleHeap)
            throws Exception {
        List<SoakWorker> workers = SoakWorkers.all(options, incarnations, stats, cluster.clientConfig());
        workers.forEach(SoakWorker::start);
        List<SoakWorker> restartable =
                workers.stream().filter(SoakWorker::scheduledRestarts).toList();
        List<Map<Integer, BrokerProbe.Heap>> samples = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + length.toNanos();
        long restartNanos = options.restartEvery().toNanos();
        long progressNanos = length.toSeconds() >= 300 ? TimeUnit.SECONDS.toNanos(60) : TimeUnit.SECONDS.toNanos(15);
        boolean sample = sampleHeap && length.toSeconds() >= 480;
        long quarter = length.toNanos() / 4;
        long nextRestart = start + restartNanos;
        long nextProgress = start + progressNanos;
        long nextSample = start + quarter;
        try {
            while (System.nanoTime() < end) {
                long now = System.nanoTime();
                if (now >= nextRestart) {
                    restartable
                            .get((int) (restartCursor++ % restartable.size()))
                            .requestRestart();
                    nextRestart += restartNanos;
                }
                if (now >= nextProgress) {
                    log.println(progress(phase, now - start, length));
                    nextProgress += progressNanos;
                }
                if (sample && now >= nextSample && nextSample < end - length.toNanos() / 8) {
                    Map<Integer, BrokerProbe.Heap> h = heaps();
                    samples.add(h);
                    log.printf(
                            Locale.ROOT,
                            "soak: heap after full GC under load at %d s: %s%n",
                            TimeUnit.NANOSECONDS.toSeconds(now - start),
                            heapLine(h));
                    nextSample += quarter;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        } finally {
            workers.forEach(SoakWorker::stop);
            for (SoakWorker w : workers) {
                if (!w.join(JOIN_TIMEOUT)) {
                    checks.violation(w.name + " did not close its client within " + JOIN_TIMEOUT.toSeconds() + " s");
                }
            }
        }
        log.println(progress(phase + " done", System.nanoTime() - start, length));
        return samples;
    }

    private String progress(String phase, long elapsedNanos, Duration length) {
        return String.format(
                Locale.ROOT,
                "soak: %s %s/%s: produced %,d (+%,d acks=0), consumed %,d, errors %d,"
                        + " restarts %d, admin calls %,d",
                phase,
                clock(TimeUnit.NANOSECONDS.toSeconds(elapsedNanos)),
                clock(length.toSeconds()),
                stats.produced.get(),
                stats.acks0Sent.get(),
                stats.consumed.get(),
                stats.errors.get(),
                stats.restarts(),
                stats.adminCalls.get());
    }

    /** Waits until kpipe's state gauges are 0 on every broker (no client is connected); records a violation if not. */
    private Map<Integer, Map<String, Double>> quiesce(String when) throws Exception {
        if (!options.kpipe()) {
            return Map.of();
        }
        long deadline = System.nanoTime() + GAUGE_TIMEOUT.toNanos();
        while (true) {
            Map<Integer, Map<String, Double>> gauges = new TreeMap<>();
            boolean zero = true;
            for (KafkaNode n : cluster.nodes()) {
                Map<String, Double> g = BrokerProbe.kpipe(n, BrokerProbe.STATE_GAUGES);
                gauges.put(n.id(), g);
                zero &= g.values().stream().allMatch(v -> v == 0);
            }
            if (zero) {
                return gauges;
            }
            if (System.nanoTime() > deadline) {
                checks.violation("kpipe gauges not back to 0 " + when + " within " + GAUGE_TIMEOUT.toSeconds() + " s: "
                        + gauges);
                return gauges;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    private Map<Integer, BrokerProbe.Heap> heaps() throws Exception {
        Map<Integer, BrokerProbe.Heap> m = new TreeMap<>();
        for (KafkaNode n : cluster.nodes()) {
            m.put(n.id(), BrokerProbe.heapAfterFullGc(n));
        }
        return m;
    }

    /** @return how many ERROR lines each node's {@code server.log} has now */
    private Map<Integer, Long> errorLines() {
        Map<Integer, Long> m = new TreeMap<>();
        for (KafkaNode n : cluster.nodes()) {
            m.put(n.id(), n.log().lines().filter(l -> l.contains("] ERROR ")).count());
        }
        return m;
    }

    /**
     * What a soak run did and found.
     *
     * @param violations the failed checks (the first 20), empty if all passed
     * @param violationCount how many checks failed in all
     */
    public record Result(
            SoakOptions options,
            String kafkaVersion,
            String kpipeVersion,
            SoakStats stats,
            long readBack,
            long incarnations,
            long acks0InLog,
            Map<Integer, BrokerProbe.Heap> heapStart,
            Map<Integer, BrokerProbe.Heap> heapEnd,
            List<Map<Integer, BrokerProbe.Heap>> heapUnderLoad,
            Map<Integer, Map<String, Double>> gaugesAfterWarmup,
            Map<Integer, Map<String, Double>> gaugesAtEnd,
            Map<Integer, Map<String, Double>> counters,
            Map<Integer, Double> upgradesAtStart,
            Map<Integer, Long> brokerErrorLines,
            List<String> violations,
            int violationCount,
            long elapsedSeconds) {

        /** @return whether every check passed */
        public boolean passed() {
            return violationCount == 0;
        }

        /** @return the printed summary: counts, heap per broker start/end, gauges and counters at the end, verdict */
        public String report() {
            return new SoakReport(this).text();
        }
    }
}
