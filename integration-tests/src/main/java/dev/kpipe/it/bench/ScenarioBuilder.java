// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds a {@link Scenario} from named settings. Defaults: 1 node, no window, 1 producer, partitioner's choice of
 * partition, no idempotence, 5 requests in flight, linger 0, flat out, no A/A, not transactional, the Java producer as configured here (no {@link #client}). Not thread-safe; {@link #build()} copies the settings, so a builder may go on to
 * build a variant of what it built.
 */
final class ScenarioBuilder {
    // Package-private: read once by Scenario's constructor.
    String id;
    String label;
    int windowMs;
    int nodes = 1;
    String topic;
    int fixedPartition = -1;
    boolean partitionPerProducer;
    int producers = 1;
    int recordBytes;
    String acks;
    boolean idempotence;
    int maxInFlight = 5;
    int batchBytes;
    int lingerMs;
    int kpipeLingerMs = -1;
    long bufferBytes;
    final Map<Integer, Map<String, String>> nodeConfig = new TreeMap<>();
    final Map<String, String> topicConfig = new LinkedHashMap<>();
    final Map<Integer, List<Integer>> assignment = new LinkedHashMap<>();
    final Map<String, String> kpipeConfig = new LinkedHashMap<>();
    int offeredRecordsPerSec;
    boolean aaControl;
    int commitEvery;
    BenchClient client;
    int slowReaders;
    String sideTopic;
    boolean slowReadersActive;
    int connections;
    int excludedProducers;
    int excludedRecordsPerSec;
    final Map<Integer, List<Integer>> sideAssignment = new LinkedHashMap<>();

    ScenarioBuilder() {}

    /** @param id the scenario's id ({@code S1}, ...), which also selects its targets ({@link Report}) */
    ScenarioBuilder id(String id) {
        this.id = id;
        return this;
    }

    /** @param label the name in the table and the JSON, e.g. {@code S1 W=100ms} */
    ScenarioBuilder label(String label) {
        this.label = label;
        return this;
    }

    /** @param windowMs W: the follower's {@code replica.fetch.wait.max.ms}, ms (0: no window) */
    ScenarioBuilder windowMs(int windowMs) {
        this.windowMs = windowMs;
        return this;
    }

    /** @param nodes the cluster's node count */
    ScenarioBuilder nodes(int nodes) {
        this.nodes = nodes;
        return this;
    }

    /** @param topic the topic the producers write */
    ScenarioBuilder topic(String topic) {
        this.topic = topic;
        return this;
    }

    /**
     * Adds a partition of the topic, in order of partition number.
     *
     * @param partition the partition
     * @param replicas its replicas, the first one the leader
     */
    ScenarioBuilder replicas(int partition, List<Integer> replicas) {
        assignment.put(partition, List.copyOf(replicas));
        return this;
    }

    /** @param partition the partition every record goes to, or -1 for the producer's partitioner */
    ScenarioBuilder fixedPartition(int partition) {
        this.fixedPartition = partition;
        return this;
    }

    /** Producer i writes partition i only (S8); the topic needs at least one partition per producer. */
    ScenarioBuilder partitionPerProducer() {
        this.partitionPerProducer = true;
        this.fixedPartition = -1;
        return this;
    }

    /** Sets one topic config (e.g. {@code min.insync.replicas}). */
    ScenarioBuilder topicConfig(String key, String value) {
        topicConfig.put(key, value);
        return this;
    }

    /** Sets one broker config of one node, on both sides. */
    ScenarioBuilder nodeConfig(int node, String key, String value) {
        nodeConfig.computeIfAbsent(node, n -> new LinkedHashMap<>()).put(key, value);
        return this;
    }

    /** Sets one broker config of every node (of the nodes set so far), on both sides. */
    ScenarioBuilder nodeConfigOnEveryNode(String key, String value) {
        for (int node = 1; node <= nodes; node++) {
            nodeConfig(node, key, value);
        }
        return this;
    }

    /** Sets one broker config of the kpipe side only (every node). */
    ScenarioBuilder kpipeConfig(String key, String value) {
        kpipeConfig.put(key, value);
        return this;
    }

    /** @param producers the producer count (one connection each to the leader) */
    ScenarioBuilder producers(int producers) {
        this.producers = producers;
        return this;
    }

    /** @param bytes the record value size, bytes */
    ScenarioBuilder recordBytes(int bytes) {
        this.recordBytes = bytes;
        return this;
    }

    /** @param acks the producers' {@code acks} ({@code all}, {@code 1}) */
    ScenarioBuilder acks(String acks) {
        this.acks = acks;
        return this;
    }

    /** @param idempotence the producers' {@code enable.idempotence} */
    ScenarioBuilder idempotence(boolean idempotence) {
        this.idempotence = idempotence;
        return this;
    }

    /** @param maxInFlight the producers' {@code max.in.flight.requests.per.connection} */
    ScenarioBuilder maxInFlight(int maxInFlight) {
        this.maxInFlight = maxInFlight;
        return this;
    }

    /** @param bytes the producers' {@code batch.size}, bytes */
    ScenarioBuilder batchBytes(int bytes) {
        this.batchBytes = bytes;
        return this;
    }

    /** @param ms the producers' {@code linger.ms} */
    ScenarioBuilder lingerMs(int ms) {
        this.lingerMs = ms;
        return this;
    }

    /** @param ms the kpipe side's producers' {@code linger.ms}, or -1 for {@link #lingerMs} on every side */
    ScenarioBuilder kpipeLingerMs(int ms) {
        this.kpipeLingerMs = ms;
        return this;
    }

    /** @param bytes each producer's {@code buffer.memory}, bytes */
    ScenarioBuilder bufferBytes(long bytes) {
        this.bufferBytes = bytes;
        return this;
    }

    /** @param recordsPerSec records/s offered by all producers together ({@link RatePacer}); 0 for flat out */
    ScenarioBuilder offeredRecordsPerSec(int recordsPerSec) {
        this.offeredRecordsPerSec = recordsPerSec;
        return this;
    }

    /** @param aaControl whether a second stock cluster runs in the same alternation (A/A) */
    ScenarioBuilder aaControl(boolean aaControl) {
        this.aaControl = aaControl;
        return this;
    }

    /** @param records records per transaction (the producers are transactional); 0 for non-transactional */
    ScenarioBuilder commitEvery(int records) {
        this.commitEvery = records;
        return this;
    }

    /**
     * @param client the producer client (S1 {@code --client}): its idempotence and in-flight bound replace the
     *     builder's
     */
    ScenarioBuilder client(BenchClient client) {
        this.client = client;
        this.idempotence = client.idempotent;
        this.maxInFlight = client.maxInFlight;
        return this;
    }

    /**
     * @param readers S9: raw connections writing produce requests to {@code topic} (same replicas as the scenario's
     *     topic) and never reading a response
     * @param topic their topic
     * @param active a slow reader the broker stopped reading is replaced by a new connection ({@link SlowReaders})
     */
    ScenarioBuilder slowReaders(int readers, String topic, boolean active) {
        this.slowReaders = readers;
        this.sideTopic = topic;
        this.slowReadersActive = active;
        return this;
    }

    /** @param connections S10: raw connections to the broker (one in ten producing) instead of producers */
    ScenarioBuilder connections(int connections) {
        this.connections = connections;
        return this;
    }

    /**
     * S11: producers on a second topic that the kpipe side names in {@code kpipe.topics.exclude}, one partition (on
     * {@code replicas}) and one connection each, beside the scenario's own producers.
     *
     * @param producers the excluded producers
     * @param recordsPerSec records/s they offer together ({@link RatePacer})
     * @param topic their topic
     * @param replicas the replicas of each of its partitions, the first one the leader
     */
    ScenarioBuilder excludedFleet(int producers, int recordsPerSec, String topic, List<Integer> replicas) {
        this.excludedProducers = producers;
        this.excludedRecordsPerSec = recordsPerSec;
        this.sideTopic = topic;
        for (int p = 0; p < producers; p++) {
            sideAssignment.put(p, List.copyOf(replicas));
        }
        return kpipeConfig("kpipe.topics.exclude", topic);
    }

    /**
     * @return the scenario (the builder's maps are copied)
     * @throws NullPointerException if the id, label, topic or acks is missing
     * @throws IllegalStateException if no partition was added
     */
    Scenario build() {
        return new Scenario(this);
    }
}
