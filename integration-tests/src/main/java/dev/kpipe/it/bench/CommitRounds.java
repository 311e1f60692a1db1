// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The rounds of S6 and S7 ({@link CommitScenario}) against one running cluster, and the cluster's preparation: the
 * offsets topic and the transaction log led by node 1 ({@link #leadOnNodeOne}), the topics, S7's input written.
 *
 * <p>Threads: the caller's thread runs S6's consumer (its commit callbacks run there too, inside {@code poll} and
 * {@code commitAsync}) and samples every figure at the window's edges; one more thread feeds S6's partition. S7's
 * application runs on its own stream thread; the caller samples it.
 */
final class CommitRounds {
    /** The APIs of one transaction, in the order a transaction sends them (RequestMetrics' {@code request} tag). */
    static final List<String> APIS =
            List.of("AddPartitionsToTxn", "Produce", "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn", "WriteTxnMarkers");

    /** The APIs sampled on node 1: {@link #APIS} and S6's OFFSET_COMMIT. */
    private static final List<String> BROKER_APIS =
            Stream.concat(APIS.stream(), Stream.of("OffsetCommit")).toList();

    /** kpipe's counters sampled on node 1 (kpipe sides only). */
    private static final List<String> KPIPE_COUNTERS =
            List.of("pipelined-offset-commit-total", "pipelined-txn-offset-commit-total");

    private static final TopicPartition INPUT = new TopicPartition(CommitScenario.INPUT_TOPIC, 0);

    private CommitRounds() {}

    /**
     * Creates the scenario's topics, moves the leadership of the offsets topic and the transaction log to node 1 and,
     * for S7, writes the input.
     *
     * @param c a started cluster of the scenario
     * @param s the scenario
     * @param o the options ({@link CommitOptions#s7InputRecords})
     * @throws Exception if a step fails or times out
     */
    static void prepare(Cluster c, CommitScenario s, BenchOptions o) throws Exception {
        Admin admin = c.admin();
        List<NewTopic> topics = new ArrayList<>();
        topics.add(new NewTopic(CommitScenario.INPUT_TOPIC, Map.of(0, List.of(1))));
        if (s.isStreams()) {
            topics.add(new NewTopic(CommitScenario.OUTPUT_TOPIC, Map.of(0, List.of(1, 2)))
                    .configs(Map.of("min.insync.replicas", "2")));
        }
        admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        // Both internal topics are created on the first FindCoordinator of their kind.
        try {
            admin.listConsumerGroupOffsets("bench-find-coordinator")
                    .partitionsToOffsetAndMetadata()
                    .get(90, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            // the group does not exist: the coordinator was found, so the topic is there
        }
        leadOnNodeOne(admin, "__consumer_offsets");
        if (s.isStreams()) {
            try {
                admin.describeTransactions(List.of("bench-find-coordinator"))
                        .all()
                        .get(90, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                // TRANSACTIONAL_ID_NOT_FOUND once the coordinator answers: the log is there
            }
            leadOnNodeOne(admin, "__transaction_state");
            writeInput(c, o.commits().s7InputRecords());
        }
    }

    /**
     * Orders every partition's replicas [1,2] and elects the preferred leader, so node 1 leads them; waits until it
     * does.
     *
     * @param admin the cluster's admin client
     * @param topic an internal topic with one or more partitions on nodes 1 and 2
     * @throws Exception if node 1 does not lead every partition within 90 s
     */
    static void leadOnNodeOne(Admin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        TopicDescription d = null;
        while (d == null) {
            try {
                d = admin.describeTopics(List.of(topic))
                        .allTopicNames()
                        .get(10, TimeUnit.SECONDS)
                        .get(topic);
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(topic + " was not created within 90 s", e);
                }
                Thread.sleep(200);
            }
        }
        Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
        for (var p : d.partitions()) {
            moves.put(
                    new TopicPartition(topic, p.partition()), Optional.of(new NewPartitionReassignment(List.of(1, 2))));
        }
        admin.alterPartitionReassignments(moves).all().get(60, TimeUnit.SECONDS);
        while (true) {
            if (admin.listPartitionReassignments(moves.keySet())
                    .reassignments()
                    .get(10, TimeUnit.SECONDS)
                    .isEmpty()) {
                try {
                    admin.electLeaders(ElectionType.PREFERRED, moves.keySet())
                            .all()
                            .get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    // ELECTION_NOT_NEEDED: node 1 leads already
                }
                TopicDescription now = admin.describeTopics(List.of(topic))
                        .allTopicNames()
                        .get(10, TimeUnit.SECONDS)
                        .get(topic);
                if (now.partitions().stream()
                        .allMatch(p -> p.leader() != null
                                && p.leader().id() == 1
                                && p.isr().size() == 2)) {
                    return;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("node 1 does not lead " + topic + " with both replicas in sync");
            }
            Thread.sleep(200);
        }
    }

    private static void writeInput(Cluster c, int records) {
        Map<String, Object> pc = new HashMap<>(c.clientConfig());
        pc.put(ProducerConfig.ACKS_CONFIG, "1");
        pc.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        pc.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        pc.put(ProducerConfig.CLIENT_ID_CONFIG, "bench-commits-input");
        byte[] value = value();
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(pc, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(CommitScenario.INPUT_TOPIC, 0, null, value));
            }
            p.flush();
        }
    }

    private static byte[] value() {
        byte[] v = new byte[CommitScenario.RECORD_BYTES];
        for (int i = 0; i < v.length; i++) {
            v[i] = (byte) ('a' + i % 26);
        }
        return v;
    }

    /** The broker's and the machine's counters at one edge of the window. */
    private record Edge(long nanos, Map<String, Double> counters, CpuSampler.Reading cpu) {}

    private static Edge edge(Cluster c, CpuSampler cpu, boolean kpipe) {
        Map<String, Double> m = new LinkedHashMap<>();
        KafkaNode n = c.node(1);
        for (String api : BROKER_APIS) {
            // Kafka registers an API's meters at its first request: none yet counts 0
            double count =
                    BrokerProbe.count(n, "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=" + api + ",*");
            m.put(api + ".count", Double.isNaN(count) ? 0 : count);
            double[] time = totalTime(n, api);
            m.put(api + ".timed", time[0]);
            m.put(api + ".ms_sum", time[1]);
        }
        if (kpipe) {
            for (String k : KPIPE_COUNTERS) {
                m.put(k, RoundMetrics.kpipeMetric(n, k));
            }
        }
        return new Edge(System.nanoTime(), m, cpu.read());
    }

    /** @return {count, count x mean} of the API's TotalTimeMs histogram on the node, NaN if unavailable */
    private static double[] totalTime(KafkaNode n, String api) {
        try {
            MBeanServerConnection jmx = n.jmx();
            ObjectName name = new ObjectName("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=" + api);
            double count = ((Number) jmx.getAttribute(name, "Count")).doubleValue();
            double mean = ((Number) jmx.getAttribute(name, "Mean")).doubleValue();
            return new double[] {count, count * mean};
        } catch (javax.management.InstanceNotFoundException e) {
            return new double[] {0, 0}; // no request of that API yet
        } catch (Exception e) {
            return new double[] {Double.NaN, Double.NaN};
        }
    }

    /** Adds the broker's figures over the window: per API requests/s, mean ms, and per transaction if known. */
    private static void brokerFigures(Edge a, Edge b, double seconds, double transactions, Map<String, Double> f) {
        for (String api : BROKER_APIS) {
            double count = b.counters.get(api + ".count") - a.counters.get(api + ".count");
            double timed = b.counters.get(api + ".timed") - a.counters.get(api + ".timed");
            double sum = b.counters.get(api + ".ms_sum") - a.counters.get(api + ".ms_sum");
            f.put("broker_" + api + "_per_s", count / seconds);
            f.put("broker_" + api + "_ms", timed > 0 ? sum / timed : Double.NaN);
            if (transactions > 0) {
                f.put("broker_" + api + "_per_txn", count / transactions);
            }
        }
        for (String k : KPIPE_COUNTERS) {
            if (a.counters.containsKey(k)) {
                f.put(
                        k.replace('-', '_').replace("_total", "_per_s"),
                        (b.counters.get(k) - a.counters.get(k)) / seconds);
            }
        }
        double[] cores = CpuSampler.cores(a.cpu, b.cpu);
        f.put("cpu_cores_bench_jvm", cores[0]);
        f.put("cpu_cores_brokers_under_test", cores[1]);
        f.put("cpu_cores_other_processes", cores[2]);
        f.put(
                "load_average_1m_at_end",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        .getSystemLoadAverage());
    }

    private static CpuSampler cpuSampler(Cluster c) {
        return new CpuSampler(
                c.nodes().stream().map(KafkaNode::pid).filter(p -> p > 0).toList());
    }

    /**
     * S6: a feeding producer writes {@link CommitOptions#s6RecordsPerSec} records/s into the input partition; one
     * classic consumer, assigned that partition from its end, polls and calls {@code commitAsync()} after every poll
     * that returned records. Measured over the window: records consumed, commit callbacks without error (and their
     * latency from the {@code commitAsync} call), and how far the acknowledged committed offset advanced. The consumer
     * is closed with a 2 s timeout: commits still queued then are abandoned, not waited for.
     */
    static CommitResult runS6(
            Cluster c, CommitScenario s, CommitSide side, int round, BenchOptions o, Progress progress)
            throws InterruptedException {
        String id = "bench-S6-" + side.label() + "-r" + round;
        long start = System.nanoTime();
        long windowStart = start + TimeUnit.SECONDS.toNanos(o.warmupSeconds());
        long windowEnd = windowStart + TimeUnit.SECONDS.toNanos(o.durationSeconds());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Exception> feedError = new AtomicReference<>();
        Thread feeder = new Thread(() -> feed(c, id, o.commits().s6RecordsPerSec(), stop, feedError), id + "-feeder");
        feeder.setDaemon(true);
        Map<String, Object> cc = new HashMap<>(c.clientConfig());
        cc.put(ConsumerConfig.GROUP_ID_CONFIG, id);
        cc.put(ConsumerConfig.CLIENT_ID_CONFIG, id);
        cc.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        cc.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        LatencyHistogram latency = new LatencyHistogram();
        long[] acked = new long[1]; // commit callbacks without error, all round
        long requested = 0; // commitAsync calls
        long[] committed = {-1}; // highest committed offset acknowledged
        long[] errors = new long[1];
        String[] firstError = new String[1];
        long consumed = 0;
        CpuSampler cpu = cpuSampler(c);
        Edge e0 = null;
        long acked0 = 0;
        long committed0 = 0;
        long consumed0 = 0;
        long requested0 = 0;
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(cc, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        try {
            consumer.assign(List.of(INPUT));
            consumer.seekToEnd(List.of(INPUT));
            consumer.position(INPUT);
            // finds the group coordinator (OffsetFetch) before any load: the first commits do not wait for it
            consumer.committed(java.util.Set.of(INPUT), Duration.ofSeconds(60));
            feeder.start();
            progress.phase("warm-up", start, o.warmupSeconds(), () -> acked[0]);
            while (true) {
                long now = System.nanoTime();
                if (e0 == null && now >= windowStart) {
                    e0 = edge(c, cpu, side != CommitSide.STOCK);
                    acked0 = acked[0];
                    committed0 = committed[0];
                    consumed0 = consumed;
                    requested0 = requested;
                    progress.phase("measuring", windowStart, o.durationSeconds(), () -> acked[0]);
                }
                if (now >= windowEnd) {
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                consumed += records.count();
                if (!records.isEmpty()) {
                    long sent = System.nanoTime();
                    boolean inWindow = e0 != null;
                    requested++;
                    consumer.commitAsync((offsets, ex) -> {
                        if (ex != null) {
                            errors[0]++;
                            if (firstError[0] == null) {
                                firstError[0] = ex.toString();
                            }
                            return;
                        }
                        acked[0]++;
                        OffsetAndMetadata om = offsets.get(INPUT);
                        if (om != null) {
                            committed[0] = Math.max(committed[0], om.offset());
                        }
                        if (inWindow) {
                            latency.record((System.nanoTime() - sent) / 1000);
                        }
                    });
                }
            }
            Edge e1 = edge(c, cpu, side != CommitSide.STOCK);
            double seconds = (e1.nanos - e0.nanos) / 1e9;
            Map<String, Double> f = new LinkedHashMap<>();
            f.put("records_per_s", (consumed - consumed0) / seconds);
            f.put("commits_per_s", (acked[0] - acked0) / seconds);
            f.put("commits_requested_per_s", (requested - requested0) / seconds);
            f.put("committed_records_per_s", (committed[0] - committed0) / seconds);
            f.put("commit_p50_ms", latency.count() > 0 ? latency.percentileMicros(50) / 1000.0 : Double.NaN);
            f.put("commit_p99_ms", latency.count() > 0 ? latency.percentileMicros(99) / 1000.0 : Double.NaN);
            f.put("commits_measured_for_latency", (double) latency.count());
            if (side != CommitSide.STOCK) {
                f.put(
                        "kpipe_inflight_offset_commit_per_connection_max",
                        RoundMetrics.kpipeMetric(c.node(1), "inflight-offset-commit-per-connection-max"));
            }
            brokerFigures(e0, e1, seconds, 0, f);
            if (feedError.get() != null && firstError[0] == null) {
                errors[0]++;
                firstError[0] = "feeder: " + feedError.get();
            }
            return new CommitResult(s.label(), side, round, o.durationSeconds(), f, errors[0], firstError[0]);
        } finally {
            stop.set(true);
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(2)));
            feeder.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    private static void feed(
            Cluster c, String id, int recordsPerSec, AtomicBoolean stop, AtomicReference<Exception> error) {
        Map<String, Object> pc = new HashMap<>(c.clientConfig());
        pc.put(ProducerConfig.ACKS_CONFIG, "1");
        pc.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        pc.put(ProducerConfig.CLIENT_ID_CONFIG, id + "-feeder");
        byte[] value = value();
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(pc, new ByteArraySerializer(), new ByteArraySerializer())) {
            RatePacer pacer = new RatePacer(recordsPerSec, System.nanoTime());
            while (!stop.get()) {
                long n = pacer.take(System.nanoTime());
                for (long i = 0; i < n; i++) {
                    p.send(new ProducerRecord<>(CommitScenario.INPUT_TOPIC, 0, null, value), (md, ex) -> {
                        if (ex != null) {
                            error.compareAndSet(null, ex);
                        }
                    });
                }
                long wait = pacer.nextDueNanos() - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(50)));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            error.compareAndSet(null, e);
        }
    }

    /**
     * S7: a Kafka Streams application (a new {@code application.id} per round, so it reads the input from the
     * start), {@code processing.guarantee=exactly_once_v2}, {@code commit.interval.ms=100}, one stream thread,
     * {@code mapValues} from the input to the output topic. Started and running before the warm-up. Measured over the
     * window: how far the application's committed input offset advanced (records processed and committed in
     * transactions), the stream thread's commits (one transaction each), and node 1's requests per API.
     */
    static CommitResult runS7(
            Cluster c, CommitScenario s, CommitSide side, int round, BenchOptions o, Progress progress)
            throws Exception {
        String appId = "bench-S7-" + side.label() + "-r" + round;
        Path stateDir = Files.createTempDirectory("kpipe-bench-streams-");
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, CommitScenario.S7_COMMIT_INTERVAL_MS);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        StreamsBuilder b = new StreamsBuilder();
        b.stream(CommitScenario.INPUT_TOPIC, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .mapValues(v -> {
                    byte[] out = v.clone();
                    out[0] = (byte) Character.toUpperCase(out[0]);
                    return out;
                })
                .to(CommitScenario.OUTPUT_TOPIC, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        AtomicReference<Throwable> failure = new AtomicReference<>();
        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.setUncaughtExceptionHandler(e -> {
            failure.compareAndSet(null, e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        CpuSampler cpu = cpuSampler(c);
        try {
            streams.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            progress.context(s.label() + " round " + round + " " + side.label() + ": starting the application");
            while (streams.state() != KafkaStreams.State.RUNNING) {
                if (System.nanoTime() > deadline
                        || failure.get() != null
                        || streams.state().hasCompletedShutdown()) {
                    throw new IllegalStateException(
                            appId + " not running within 90 s: " + streams.state(), failure.get());
                }
                Thread.sleep(50);
            }
            long start = System.nanoTime();
            long windowStart = start + TimeUnit.SECONDS.toNanos(o.warmupSeconds());
            long windowEnd = windowStart + TimeUnit.SECONDS.toNanos(o.durationSeconds());
            progress.phase("warm-up", start, o.warmupSeconds(), () -> 0);
            RoundResult.sleepUntil(windowStart);
            long off0 = committedInput(c.admin(), appId);
            double txn0 = commitTotal(streams);
            Edge e0 = edge(c, cpu, side != CommitSide.STOCK);
            progress.phase("measuring", windowStart, o.durationSeconds(), () -> 0);
            RoundResult.sleepUntil(windowEnd);
            long off1 = committedInput(c.admin(), appId);
            double txn1 = commitTotal(streams);
            Edge e1 = edge(c, cpu, side != CommitSide.STOCK);
            double seconds = (e1.nanos - e0.nanos) / 1e9;
            Map<String, Double> f = new LinkedHashMap<>();
            double txns = txn1 - txn0;
            f.put("records_per_s", (off1 - off0) / seconds);
            f.put("transactions_per_s", txns / seconds);
            f.put("records_per_transaction", txns > 0 ? (off1 - off0) / txns : Double.NaN);
            f.put("committed_input_offset_at_end", (double) off1);
            brokerFigures(e0, e1, seconds, txns, f);
            long errors = 0;
            String firstError = null;
            if (failure.get() != null) {
                errors++;
                firstError = failure.get().toString();
            } else if (off1 >= o.commits().s7InputRecords()) {
                errors++;
                firstError = "input exhausted (" + off1 + " records): raise --s7-input-records";
            }
            return new CommitResult(s.label(), side, round, o.durationSeconds(), f, errors, firstError);
        } finally {
            streams.close(Duration.ofSeconds(60));
            deleteTree(stateDir);
        }
    }

    /** @return the application's committed offset of the input partition, 0 if none yet */
    private static long committedInput(Admin admin, String group) throws Exception {
        OffsetAndMetadata om = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS)
                .get(INPUT);
        return om == null ? 0 : om.offset();
    }

    /** @return the stream threads' {@code commit-total} summed (one transaction per commit under exactly-once) */
    private static double commitTotal(KafkaStreams streams) {
        double sum = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
            MetricName n = e.getKey();
            if (n.group().equals("stream-thread-metrics") && n.name().equals("commit-total")) {
                sum += ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return sum;
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(q -> q.toFile().delete());
        } catch (IOException e) {
            System.err.println("bench: could not delete " + dir + ": " + e);
        }
    }
}
