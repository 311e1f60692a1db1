// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.ClusterSpec;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One benchmark scenario: the cluster to run (nodes, broker overrides), the topic, and the producer load. The
 * scenarios themselves (S1, S1L, S2, S2F, S3, S5, S8) are defined in {@link Scenarios}, each as named settings of a
 * {@link ScenarioBuilder}.
 *
 * <p>Immutable.
 */
final class Scenario {
    /** {@code replica.fetch.min.bytes} of S1's follower: far above anything produced in one window (int config). */
    static final int FOLLOWER_FETCH_MIN_BYTES = 1_000_000_000;

    final String id;
    final String label;
    /** S1: the follower's fetch wait W in ms; 0 for S2. */
    final int windowMs;

    final int nodes;
    final String topic;
    final int partitions;
    /** Partition every record goes to, or -1 to let the producer's partitioner choose. */
    final int fixedPartition;
    /** Producer i writes partition i only (S8: one partition and one connection per producer). */
    final boolean partitionPerProducer;

    final int producers;
    final int recordBytes;
    final String acks;
    final boolean idempotence;
    final int maxInFlight;
    final int batchBytes;
    final int lingerMs;
    /** The kpipe side's producers' {@code linger.ms}, or -1 for {@link #lingerMs} on every side. */
    final int kpipeLingerMs;

    final long bufferBytes;
    final Map<Integer, Map<String, String>> nodeConfig;
    final Map<String, String> topicConfig;
    final Map<Integer, List<Integer>> assignment;
    /** Broker settings for the kpipe side only (S3's budget). */
    final Map<String, String> kpipeConfig;
    /** Records/s offered by all producers together ({@link RatePacer}), or 0 for flat out. */
    final int offeredRecordsPerSec;
    /** Whether a second stock cluster runs in the same alternation (A/A), to show the noise. */
    final boolean aaControl;
    /** S5: records per transaction of a transactional producer; 0 for a non-transactional one. */
    final int commitEvery;
    /**
     * The producer client chosen with {@code --client} (the Java producer, or one run as a child process), or null for
     * the Java producer as this scenario configures it.
     */
    final BenchClient client;
    /** S9: raw connections writing produce requests to {@link #sideTopic} and never reading; 0 otherwise. */
    final int slowReaders;
    /** S9: the slow readers' topic (the same replicas as {@link #topic}), or null. */
    final String sideTopic;
    /** S9: stalled slow readers are replaced by new connections, so that they keep writing (the active regime). */
    final boolean slowReadersActive;
    /** S10: raw connections to the broker instead of producers; 0 otherwise. */
    final int connections;
    /** S11: producers on {@link #sideTopic}, which the kpipe side excludes, before the {@link #producers}; else 0. */
    final int excludedProducers;
    /** S11: records/s the excluded producers offer together. */
    final int excludedRecordsPerSec;

    private final Map<Integer, List<Integer>> sideAssignment;

    Scenario(ScenarioBuilder b) {
        this.id = Objects.requireNonNull(b.id, "id");
        this.label = Objects.requireNonNull(b.label, "label");
        this.windowMs = b.windowMs;
        this.nodes = b.nodes;
        this.topic = Objects.requireNonNull(b.topic, "topic");
        if (b.assignment.isEmpty()) {
            throw new IllegalStateException(id + ": no partition assigned");
        }
        this.partitions = b.assignment.size();
        this.fixedPartition = b.fixedPartition;
        this.partitionPerProducer = b.partitionPerProducer;
        this.producers = b.producers;
        this.recordBytes = b.recordBytes;
        this.acks = Objects.requireNonNull(b.acks, "acks");
        this.idempotence = b.idempotence;
        this.maxInFlight = b.maxInFlight;
        this.batchBytes = b.batchBytes;
        this.lingerMs = b.lingerMs;
        this.kpipeLingerMs = b.kpipeLingerMs;
        this.bufferBytes = b.bufferBytes;
        Map<Integer, Map<String, String>> nodes = new TreeMap<>();
        b.nodeConfig.forEach((node, m) -> nodes.put(node, Collections.unmodifiableMap(new LinkedHashMap<>(m))));
        this.nodeConfig = Collections.unmodifiableMap(nodes);
        this.topicConfig = Collections.unmodifiableMap(new LinkedHashMap<>(b.topicConfig));
        this.assignment = Collections.unmodifiableMap(new LinkedHashMap<>(b.assignment));
        this.kpipeConfig = Collections.unmodifiableMap(new LinkedHashMap<>(b.kpipeConfig));
        this.offeredRecordsPerSec = b.offeredRecordsPerSec;
        this.aaControl = b.aaControl;
        this.commitEvery = b.commitEvery;
        this.client = b.client;
        this.slowReaders = b.slowReaders;
        this.sideTopic = b.sideTopic;
        this.slowReadersActive = b.slowReadersActive;
        this.connections = b.connections;
        this.excludedProducers = b.excludedProducers;
        this.excludedRecordsPerSec = b.excludedRecordsPerSec;
        this.sideAssignment = Collections.unmodifiableMap(new LinkedHashMap<>(b.sideAssignment));
        if (partitionPerProducer && producers > partitions) {
            throw new IllegalStateException(
                    id + ": " + producers + " producers, one partition each, but " + partitions + " partitions");
        }
        if (isChildProcessClient() && (producers != 1 || commitEvery > 0 || isFixedLoad())) {
            throw new IllegalStateException(
                    id + ": " + client.id + " runs as one flat-out, non-transactional producer");
        }
    }

    /** @return a builder with no id, label, topic, acks or partition yet (all required) */
    static ScenarioBuilder builder() {
        return new ScenarioBuilder();
    }

    /** @return whether the producer runs as a child process ({@link ClientRound}) rather than in this JVM */
    boolean isChildProcessClient() {
        return client != null && client.kind != BenchClient.Kind.JAVA;
    }

    /** @return the producers of a round: S11's excluded ones (indexes 0 to excluded - 1), then the others */
    int allProducers() {
        return excludedProducers + producers;
    }

    /** @return whether producer {@code i} of {@link #allProducers()} is one of S11's excluded producers */
    boolean isExcluded(int producer) {
        return producer < excludedProducers;
    }

    /** @return the topic producer {@code i} of {@link #allProducers()} writes */
    String topicOf(int producer) {
        return isExcluded(producer) ? sideTopic : topic;
    }

    /** @return records/s producer {@code i} of {@link #allProducers()} offers, or 0 for flat out */
    double offeredRecordsPerSecOf(int producer) {
        if (isExcluded(producer)) {
            return excludedRecordsPerSec / (double) excludedProducers;
        }
        return isFixedLoad() ? offeredRecordsPerSec / (double) producers : 0;
    }

    /** @return whether this is S11 (excluded producers beside pipelined ones) */
    boolean isS11() {
        return excludedProducers > 0;
    }

    /**
     * @param producer the producer's index in {@link #allProducers()}, 0-based
     * @return the partition that producer writes every record to, or null for the producer's partitioner
     */
    Integer partitionOf(int producer) {
        if (isExcluded(producer)) {
            return producer;
        }
        producer -= excludedProducers;
        if (partitionPerProducer) {
            return producer;
        }
        return fixedPartition >= 0 ? fixedPartition : null;
    }

    /** @return whether this is S9 (a good producer beside slow-reading raw connections) */
    boolean isS9() {
        return slowReaders > 0;
    }

    /** @return whether this is S10 (raw connections at scale, no producer) */
    boolean isS10() {
        return connections > 0;
    }

    /** @return whether this is S8 (acks=all at a fixed offered load, one partition per producer) */
    boolean isS8() {
        return id.equals("S8");
    }

    /**
     * @return whether the S1 ceiling ({@code max.in.flight / W} on one connection) applies: a window, one connection
     *     sending flat out (not S3's many producers, nor a fixed offered load such as S8's, nor S9's producer
     *     beside slow readers)
     */
    boolean hasCeiling() {
        return windowMs > 0 && !isS3() && !isFixedLoad() && !isS9();
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

    /** @return S3's {@code kpipe.max.inflight.bytes}, or 0 for another scenario */
    long budgetBytes() {
        String v = kpipeConfig.get("kpipe.max.inflight.bytes");
        return v == null ? 0 : Long.parseLong(v);
    }

    /** @return whether the producers offer a fixed rate (S2F, S8) rather than sending flat out */
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

    /** kpipe's default {@code kpipe.max.inflight.requests.per.connection}. */
    static final int KPIPE_DEFAULT_INFLIGHT_LIMIT = 16;

    /**
     * @return requests one connection can have in flight on kpipe: the client's bound, at most kpipe's {@code
     *     kpipe.max.inflight.requests.per.connection} (S1 with {@code --client kcat-100}: 16)
     */
    int pipelinedInFlight() {
        String limit = kpipeConfig.get("kpipe.max.inflight.requests.per.connection");
        return Math.min(maxInFlight, limit == null ? KPIPE_DEFAULT_INFLIGHT_LIMIT : Integer.parseInt(limit));
    }

    /**
     * @return the requests/s ceiling with pipelining, {@link #pipelinedInFlight()} / W; NaN if the scenario has none
     *     ({@link #hasCeiling()})
     */
    double ceilingRequestsPerSec() {
        return hasCeiling() ? pipelinedInFlight() * 1000.0 / windowMs : Double.NaN;
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
            KpipeObserver observer = o.sides().kpipeObserver();
            if (observer != null) {
                observer.install(b, observer.jar());
            }
        }
        nodeConfig.forEach((node, m) -> m.forEach((k, v) -> b.nodeConfig(node, k, v)));
        return b.build();
    }

    /** @return the topic with explicit replica assignment (leader = first replica = node 1) */
    NewTopic newTopic() {
        return new NewTopic(topic, assignment).configs(topicConfig);
    }

    /**
     * @return the topics to create: {@link #newTopic()}, and S9's {@link #sideTopic} with the same assignment, or
     *     S11's with one partition per excluded producer
     */
    List<NewTopic> newTopics() {
        if (isS11()) {
            return List.of(newTopic(), new NewTopic(sideTopic, sideAssignment).configs(topicConfig));
        }
        return sideTopic == null
                ? List.of(newTopic())
                : List.of(newTopic(), new NewTopic(sideTopic, assignment).configs(topicConfig));
    }

    /**
     * @param bootstrap the cluster's {@code bootstrap.servers}
     * @param clientId the producer's {@code client.id}
     * @param variant the side the producer runs against ({@link #kpipeLingerMs} applies to kpipe's)
     * @return the producer config
     */
    Map<String, Object> producerConfig(String bootstrap, String clientId, Variant variant) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotence);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, maxInFlight);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, batchBytes);
        p.put(
                ProducerConfig.LINGER_MS_CONFIG,
                variant == Variant.KPIPE && kpipeLingerMs >= 0 ? kpipeLingerMs : lingerMs);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, bufferBytes);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        if (commitEvery > 0) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, clientId);
        }
        return p;
    }

    /** @return a description for the table header and the JSON ({@link ScenarioText#describe}) */
    Map<String, Object> describe() {
        return ScenarioText.describe(this);
    }

    /** @return one line for the table header ({@link ScenarioText#headline}) */
    String headline() {
        return ScenarioText.headline(this);
    }
}
