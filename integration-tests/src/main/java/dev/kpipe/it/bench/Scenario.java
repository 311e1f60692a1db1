package dev.kpipe.it.bench;

import dev.kpipe.it.harness.ClusterSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One benchmark scenario: the cluster to run (nodes, broker overrides), the topic, and the producer load.
 *
 * <ul>
 *   <li><b>S1</b> (the headline): 2 nodes; node 2, the follower, delays its fetches with {@code
 *       replica.fetch.min.bytes} far above what is produced and {@code replica.fetch.wait.max.ms=W}, so an acks=all
 *       produce to the leader (node 1) waits up to W ms. One partition on [1,2], {@code min.insync.replicas=2}. One
 *       idempotent producer, acks=all, 5 in flight, 1 KiB records into partition 0, sent as fast as it accepts them.
 *       Stock Kafka answers one request per connection at a time, so it is capped near 1/W requests/s; the ceiling
 *       with pipelining is {@code max.in.flight / W}.
 *   <li><b>S2</b> (no regression): 1 node, acks=1, several producers of small records saturating the broker.
 *   <li><b>S3</b> (back pressure): S1's cluster and topic (the follower's fetches may carry 64 MiB instead of
 *       Kafka's default 1 MiB, so replication keeps up), several hundred idempotent producers (one connection each
 *       to the leader) sending flat out, and a small {@code kpipe.max.inflight.bytes}: the in-flight demand (producers
 *       x 5 requests x batch) is far above the budget, so the budget decides what the leader admits.
 *   <li><b>S2F</b> (no regression, at a fixed offered load): S2's one broker, acks=1, linger 5 ms, 1 KiB records
 *       offered at a fixed total rate well below saturation ({@link RatePacer}), so both sides carry the same
 *       traffic and broker CPU per record compares like with like; with a second stock cluster in the same
 *       alternation (A/A) to show the noise.
 *   <li><b>S1L</b> (large batches, what diskless Kafkas recommend): S1 with 1 MiB batches, linger 50 ms, W = 250 ms,
 *       32 MiB {@code buffer.memory}; the follower's fetches may carry 64 MiB per partition (Kafka's default
 *       {@code replica.fetch.max.bytes} of 1 MiB holds one 1 MiB batch per fetch, so replication, and every acks=all
 *       produce, would be capped at one batch per W on both sides).
 *   <li><b>S5</b> (exactly-once producers): S1's cluster and producer settings, but the producer is transactional
 *       ({@code transactional.id} = its client id) and commits every {@link #S5_COMMIT_EVERY} records. Each
 *       transaction's commit costs about one W on both sides (the commit markers are written with acks=all, and
 *       the next transaction's first produce waits for them), so the ceiling of kpipe/stock is below S1's: with n
 *       produce requests per transaction, (n + 1) / (n / max.in.flight + 1).
 * </ul>
 *
 * <p>Immutable.
 */
final class Scenario {
    /** {@code replica.fetch.min.bytes} of S1's follower: far above anything produced in one window (int config). */
    static final int FOLLOWER_FETCH_MIN_BYTES = 1_000_000_000;
    /** S5: records per transaction. */
    static final int S5_COMMIT_EVERY = 500;

    /**
     * S5 option: how long a broker retries adding a partition to a transaction while the coordinator still completes
     * the previous one (Kafka's {@code AddPartitionsToTxnConfig}, default 100 ms) before it answers
     * {@code CONCURRENT_TRANSACTIONS}.
     */
    static final String S5_ADD_PARTITIONS_RETRY_MAX_MS = "add.partitions.to.txn.retry.backoff.max.ms";

    final String id;
    final String label;
    /** S1: the follower's fetch wait W in ms; 0 for S2. */
    final int windowMs;

    final int nodes;
    final String topic;
    final int partitions;
    /** Partition every record goes to, or -1 to let the producer's partitioner choose. */
    final int fixedPartition;

    final int producers;
    final int recordBytes;
    final String acks;
    final boolean idempotence;
    final int maxInFlight;
    final int batchBytes;
    final int lingerMs;
    final long bufferBytes;
    private final Map<Integer, Map<String, String>> nodeConfig;
    private final Map<String, String> topicConfig;
    private final Map<Integer, List<Integer>> assignment;
    /** Broker settings for the kpipe side only (S3's budget). */
    final Map<String, String> kpipeConfig;
    /** Records/s offered by all producers together ({@link RatePacer}), or 0 for flat out. */
    final int offeredRecordsPerSec;
    /** Whether a second stock cluster runs in the same alternation (A/A), to show the noise. */
    final boolean aaControl;
    /** S5: records per transaction of a transactional producer; 0 for a non-transactional one. */
    final int commitEvery;

    private Scenario(
            String id,
            String label,
            int windowMs,
            int nodes,
            String topic,
            int partitions,
            int fixedPartition,
            int producers,
            int recordBytes,
            String acks,
            boolean idempotence,
            int maxInFlight,
            int batchBytes,
            int lingerMs,
            long bufferBytes,
            Map<Integer, Map<String, String>> nodeConfig,
            Map<String, String> topicConfig,
            Map<Integer, List<Integer>> assignment,
            Map<String, String> kpipeConfig) {
        this(
                id,
                label,
                windowMs,
                nodes,
                topic,
                partitions,
                fixedPartition,
                producers,
                recordBytes,
                acks,
                idempotence,
                maxInFlight,
                batchBytes,
                lingerMs,
                bufferBytes,
                nodeConfig,
                topicConfig,
                assignment,
                kpipeConfig,
                0,
                false);
    }

    private Scenario(
            String id,
            String label,
            int windowMs,
            int nodes,
            String topic,
            int partitions,
            int fixedPartition,
            int producers,
            int recordBytes,
            String acks,
            boolean idempotence,
            int maxInFlight,
            int batchBytes,
            int lingerMs,
            long bufferBytes,
            Map<Integer, Map<String, String>> nodeConfig,
            Map<String, String> topicConfig,
            Map<Integer, List<Integer>> assignment,
            Map<String, String> kpipeConfig,
            int offeredRecordsPerSec,
            boolean aaControl) {
        this.offeredRecordsPerSec = offeredRecordsPerSec;
        this.aaControl = aaControl;
        this.id = id;
        this.label = label;
        this.windowMs = windowMs;
        this.nodes = nodes;
        this.topic = topic;
        this.partitions = partitions;
        this.fixedPartition = fixedPartition;
        this.producers = producers;
        this.recordBytes = recordBytes;
        this.acks = acks;
        this.idempotence = idempotence;
        this.maxInFlight = maxInFlight;
        this.batchBytes = batchBytes;
        this.lingerMs = lingerMs;
        this.bufferBytes = bufferBytes;
        this.nodeConfig = nodeConfig;
        this.topicConfig = topicConfig;
        this.assignment = assignment;
        this.kpipeConfig = kpipeConfig;
        this.commitEvery = 0;
    }

    /** A copy of {@code base} with another id and label whose producers are transactional (S5). */
    private Scenario(
            Scenario base, String id, String label, int commitEvery, Map<Integer, Map<String, String>> nodeConfig) {
        this.id = id;
        this.label = label;
        this.windowMs = base.windowMs;
        this.nodes = base.nodes;
        this.topic = base.topic;
        this.partitions = base.partitions;
        this.fixedPartition = base.fixedPartition;
        this.producers = base.producers;
        this.recordBytes = base.recordBytes;
        this.acks = base.acks;
        this.idempotence = base.idempotence;
        this.maxInFlight = base.maxInFlight;
        this.batchBytes = base.batchBytes;
        this.lingerMs = base.lingerMs;
        this.bufferBytes = base.bufferBytes;
        this.nodeConfig = nodeConfig;
        this.topicConfig = base.topicConfig;
        this.assignment = base.assignment;
        this.kpipeConfig = base.kpipeConfig;
        this.offeredRecordsPerSec = base.offeredRecordsPerSec;
        this.aaControl = base.aaControl;
        this.commitEvery = commitEvery;
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (record size, batch size, buffer)
     * @return scenario S5 at that window: S1 with one transactional producer committing every {@link
     *     #S5_COMMIT_EVERY} records; with {@link MeasureOptions#s5AddPartitionsRetryMaxMs} set, every broker of both
     *     sides has that {@code add.partitions.to.txn.retry.backoff.max.ms}
     */
    static Scenario s5(int windowMs, BenchOptions o) {
        Scenario s1 = s1(windowMs, o);
        int retryMaxMs = o.measure().s5AddPartitionsRetryMaxMs();
        if (retryMaxMs == 0) {
            return new Scenario(s1, "S5", "S5 W=" + windowMs + "ms", S5_COMMIT_EVERY, s1.nodeConfig);
        }
        Map<Integer, Map<String, String>> nodeConfig = new LinkedHashMap<>();
        for (int node = 1; node <= s1.nodes; node++) {
            Map<String, String> m = new LinkedHashMap<>(s1.nodeConfig.getOrDefault(node, Map.of()));
            m.put(S5_ADD_PARTITIONS_RETRY_MAX_MS, Integer.toString(retryMaxMs));
            nodeConfig.put(node, m);
        }
        return new Scenario(
                s1, "S5", "S5 W=" + windowMs + "ms add-retry " + retryMaxMs + "ms", S5_COMMIT_EVERY, nodeConfig);
    }

    /** @return whether this is S5 (a transactional producer) */
    boolean isS5() {
        return commitEvery > 0;
    }

    /**
     * S5's ceiling of kpipe/stock records/s: a transaction of {@code commitEvery} records is n produce requests plus
     * one commit round trip; stock takes (n + 1) W, kpipe at best (n / max.in.flight + 1) W.
     *
     * @param recordsPerRequest records per produce request (measured)
     * @return the ratio ceiling; NaN if not S5 or the figure is not known
     */
    double s5RatioCeiling(double recordsPerRequest) {
        if (!isS5() || !(recordsPerRequest > 0)) {
            return Double.NaN;
        }
        double n = commitEvery / recordsPerRequest;
        return (n + 1) / (n / maxInFlight + 1);
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (record size, batch size, buffer)
     * @return scenario S1 at that window
     */
    static Scenario s1(int windowMs, BenchOptions o) {
        Map<Integer, Map<String, String>> nodeConfig = new LinkedHashMap<>();
        Map<String, String> follower = new LinkedHashMap<>();
        follower.put("replica.fetch.min.bytes", Integer.toString(FOLLOWER_FETCH_MIN_BYTES));
        follower.put("replica.fetch.wait.max.ms", Integer.toString(windowMs));
        nodeConfig.put(2, follower);
        return new Scenario(
                "S1",
                "S1 W=" + windowMs + "ms",
                windowMs,
                2,
                "bench-s1",
                1,
                0,
                1,
                o.s1RecordBytes(),
                "all",
                true,
                5,
                o.batchBytes(),
                0,
                o.s1BufferBytes(),
                nodeConfig,
                Map.of("min.insync.replicas", "2"),
                Map.of(0, List.of(1, 2)),
                Map.of());
    }

    /**
     * @param o the options (producer count, record size, batch size, buffer)
     * @return scenario S2
     */
    static Scenario s2(BenchOptions o) {
        Map<Integer, List<Integer>> assignment = new LinkedHashMap<>();
        int partitions = Math.max(1, o.s2Producers());
        for (int p = 0; p < partitions; p++) {
            assignment.put(p, List.of(1));
        }
        return new Scenario(
                "S2",
                "S2",
                0,
                1,
                "bench-s2",
                partitions,
                -1,
                o.s2Producers(),
                o.s2RecordBytes(),
                "1",
                false,
                5,
                o.batchBytes(),
                5,
                o.s2BufferBytes(),
                Map.of(),
                Map.of(),
                assignment,
                Map.of(),
                0,
                o.measure().aaControl());
    }

    /**
     * @param o the options: {@link MeasureOptions#s2fRecordsPerSec}, producers, A/A; batch size from {@code o}
     * @return scenario S2F: S2 at a fixed offered load of 1 KiB records
     */
    static Scenario s2Fixed(BenchOptions o) {
        MeasureOptions m = o.measure();
        Map<Integer, List<Integer>> assignment = new LinkedHashMap<>();
        for (int p = 0; p < m.s2fProducers(); p++) {
            assignment.put(p, List.of(1));
        }
        return new Scenario(
                "S2F",
                "S2F " + m.s2fRecordsPerSec() + " rec/s",
                0,
                1,
                "bench-s2f",
                m.s2fProducers(),
                -1,
                m.s2fProducers(),
                1024,
                "1",
                false,
                5,
                o.batchBytes(),
                5,
                4L * 1024 * 1024,
                Map.of(),
                Map.of(),
                assignment,
                Map.of(),
                m.s2fRecordsPerSec(),
                m.aaControl());
    }

    /**
     * @param o the options: {@link MeasureOptions#s1lWindowMs}, {@link MeasureOptions#s1lFollowerFetchMaxBytes}
     * @return scenario S1L: S1 with 1 MiB batches, linger 50 ms and 32 MiB {@code buffer.memory}
     */
    static Scenario s1Large(BenchOptions o) {
        MeasureOptions m = o.measure();
        int w = m.s1lWindowMs();
        Map<Integer, Map<String, String>> nodeConfig = new LinkedHashMap<>();
        Map<String, String> follower = new LinkedHashMap<>();
        follower.put("replica.fetch.min.bytes", Integer.toString(FOLLOWER_FETCH_MIN_BYTES));
        follower.put("replica.fetch.wait.max.ms", Integer.toString(w));
        // The benchmark cluster's config, the same on both sides: with Kafka's default replica.fetch.max.bytes (1 MiB
        // per partition per fetch) one delayed fetch carries one 1 MiB batch, so the follower, and every acks=all
        // produce, is capped at one batch per W whatever the leader pipelines (docs/benchmark.md, S1 large batches).
        follower.put("replica.fetch.max.bytes", Integer.toString(m.s1lFollowerFetchMaxBytes()));
        follower.put(
                "replica.fetch.response.max.bytes",
                Integer.toString(Math.max(10 * 1024 * 1024, 2 * m.s1lFollowerFetchMaxBytes())));
        nodeConfig.put(2, follower);
        String fetch = m.s1lFollowerFetchMaxBytes() == MeasureOptions.KAFKA_DEFAULT_REPLICA_FETCH_MAX_BYTES
                ? ""
                : " fetch.max " + m.s1lFollowerFetchMaxBytes() / (1024 * 1024) + "MiB";
        return new Scenario(
                "S1L",
                "S1L W=" + w + "ms" + fetch,
                w,
                2,
                "bench-s1l",
                1,
                0,
                1,
                o.s1RecordBytes(),
                "all",
                true,
                5,
                1024 * 1024,
                50,
                32L * 1024 * 1024,
                nodeConfig,
                Map.of("min.insync.replicas", "2"),
                Map.of(0, List.of(1, 2)),
                Map.of(),
                0,
                false);
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (producers, budget, record size, buffer)
     * @return scenario S3 at that window
     */
    static Scenario s3(int windowMs, BenchOptions o) {
        Map<Integer, Map<String, String>> nodeConfig = new LinkedHashMap<>();
        Map<String, String> follower = new LinkedHashMap<>();
        follower.put("replica.fetch.min.bytes", Integer.toString(FOLLOWER_FETCH_MIN_BYTES));
        follower.put("replica.fetch.wait.max.ms", Integer.toString(windowMs));
        // Kafka's default replica.fetch.max.bytes (1 MiB per partition per fetch) would cap replication, and so every
        // acks=all produce, at 1 MiB per window: the follower takes what the producers send, so the budget decides.
        follower.put("replica.fetch.max.bytes", Integer.toString(64 * 1024 * 1024));
        follower.put("replica.fetch.response.max.bytes", Integer.toString(128 * 1024 * 1024));
        nodeConfig.put(2, follower);
        return new Scenario(
                "S3",
                "S3 " + o.s3Producers() + " producers, budget " + o.s3BudgetBytes() / 1024 + " KiB, W=" + windowMs
                        + "ms",
                windowMs,
                2,
                "bench-s3",
                1,
                0,
                o.s3Producers(),
                o.s3RecordBytes(),
                "all",
                true,
                5,
                o.batchBytes(),
                0,
                o.s3BufferBytes(),
                nodeConfig,
                Map.of("min.insync.replicas", "2"),
                Map.of(0, List.of(1, 2)),
                Map.of(
                        "kpipe.max.inflight.bytes",
                        Long.toString(o.s3BudgetBytes()),
                        "kpipe.max.inflight.bytes.per.connection",
                        Long.toString(64L * 1024 * 1024)));
    }

    /** @return S3's {@code kpipe.max.inflight.bytes}, or 0 for another scenario */
    long budgetBytes() {
        String v = kpipeConfig.get("kpipe.max.inflight.bytes");
        return v == null ? 0 : Long.parseLong(v);
    }

    /** @return whether the producers offer a fixed rate (S2F) rather than sending flat out */
    boolean isFixedLoad() {
        return offeredRecordsPerSec > 0;
    }

    /** @return the S1-style records/s kpipe/stock target: 4.5x for S1L, 4x otherwise */
    double minRatio() {
        return id.equals("S1L") ? Report.S1L_MIN_RATIO : Report.S1_MIN_RATIO;
    }

    /** @return whether this is S3 (many producers under a small budget) */
    boolean isS3() {
        return id.equals("S3");
    }

    /** @return the requests/s ceiling with pipelining, {@code maxInFlight / W}; NaN if the scenario has no window */
    double ceilingRequestsPerSec() {
        return windowMs > 0 && !isS3() ? maxInFlight * 1000.0 / windowMs : Double.NaN;
    }

    /**
     * @param variant stock or kpipe
     * @param o the options (heap, stock mode)
     * @return the cluster spec of this scenario for that variant
     */
    ClusterSpec spec(Variant variant, BenchOptions o) {
        return spec(variant, o, "");
    }

    /**
     * @param variant stock or kpipe
     * @param o the options (heap, stock mode)
     * @param suffix appended to the cluster's name (the A/A control: {@code -b})
     * @return the cluster spec of this scenario for that variant
     */
    ClusterSpec spec(Variant variant, BenchOptions o, String suffix) {
        ClusterSpec.Builder b = ClusterSpec.builder()
                .name("bench-" + label.replace(' ', '-').replace("=", "").replace("/", "") + "-" + variant.label()
                        + suffix)
                .nodes(nodes)
                .heap(o.brokerHeap());
        variant.apply(b, o.stockInstallsPlugin());
        if (variant == Variant.KPIPE) {
            kpipeConfig.forEach(b::brokerConfig);
        }
        nodeConfig.forEach((node, m) -> m.forEach((k, v) -> b.nodeConfig(node, k, v)));
        return b.build();
    }

    /** @return the topic with explicit replica assignment (leader = first replica = node 1) */
    NewTopic newTopic() {
        return new NewTopic(topic, assignment).configs(topicConfig);
    }

    /**
     * @param bootstrap the cluster's {@code bootstrap.servers}
     * @param clientId the producer's {@code client.id}
     * @return the producer config
     */
    Map<String, Object> producerConfig(String bootstrap, String clientId) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotence);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, maxInFlight);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, batchBytes);
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, bufferBytes);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        if (commitEvery > 0) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, clientId);
        }
        return p;
    }

    /** @return a description for the table header and the JSON */
    Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("label", label);
        m.put("nodes", nodes);
        if (windowMs > 0) {
            m.put("follower_replica_fetch_wait_max_ms", windowMs);
            m.put("follower_replica_fetch_min_bytes", FOLLOWER_FETCH_MIN_BYTES);
            m.put("ceiling_requests_per_s", ceilingRequestsPerSec());
        }
        m.put("topic", topic);
        m.put("partitions", partitions);
        m.put("replica_assignment", assignment.toString());
        m.put("topic_config", topicConfig);
        m.put("producers", producers);
        m.put("record_value_bytes", recordBytes);
        m.put("fixed_partition", fixedPartition);
        m.put("acks", acks);
        m.put("enable_idempotence", idempotence);
        m.put("max_in_flight_requests_per_connection", maxInFlight);
        m.put("batch_size", batchBytes);
        m.put("linger_ms", lingerMs);
        m.put("buffer_memory", bufferBytes);
        if (!kpipeConfig.isEmpty()) {
            m.put("kpipe_side_config", kpipeConfig);
        }
        if (!nodeConfig.isEmpty()) {
            m.put("node_config", nodeConfig.toString());
        }
        if (isFixedLoad()) {
            m.put("offered_records_per_s", offeredRecordsPerSec);
        }
        m.put("aa_control", aaControl);
        if (commitEvery > 0) {
            m.put("transactional", true);
            m.put("records_per_transaction", commitEvery);
        }
        return m;
    }

    /** @return one line for the table header */
    String headline() {
        return label + ": " + nodes + " node(s)"
                + (windowMs > 0 ? ", follower replica.fetch.wait.max.ms=" + windowMs : "")
                + ", acks=" + acks + ", " + producers + " producer(s), " + recordBytes + " B records, batch.size="
                + batchBytes + ", linger.ms=" + lingerMs + ", max.in.flight=" + maxInFlight + ", buffer.memory="
                + bufferBytes / 1024 + " KiB"
                + (isFixedLoad() ? ", offered " + offeredRecordsPerSec + " records/s" : "")
                + (commitEvery > 0 ? ", transactional, commit every " + commitEvery + " records" : "");
    }
}
