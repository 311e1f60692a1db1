// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.List;

/**
 * The benchmark's scenarios, each defined as named settings of a {@link ScenarioBuilder}, in two families: a slow
 * follower ({@link #slowFollower}: S1, S1L, S3, S5, S8) and one saturated broker ({@link #oneBroker}: S2, S2F), the raw-socket scenarios S9
 * and S10, and the mixed fleet S11.
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
 *   <li><b>S8</b> (acks=all at a fixed offered load, the ordinary regime: fast acks, many producers): S1's cluster
 *       at a short W (1, 2, 5, 10 ms), N idempotent acks=all producers (16 by default), each with its own partition
 *       (N partitions led by node 1 on [1,2], {@code min.insync.replicas=2}; producer i writes partition i only) and
 *       so its own connection to the leader, 1 KiB records offered at a fixed total rate ({@link RatePacer}, 6,400
 *       records/s by default), linger 5 ms, with an A/A run like S2F's: what kpipe costs per produce request where it
 *       has little to gain.
 *   <li><b>S1L</b> (large batches, what diskless Kafkas recommend): S1 with 1 MiB batches, linger 50 ms, W = 250 ms,
 *       32 MiB {@code buffer.memory}; the follower's fetches may carry 64 MiB per partition (Kafka's default
 *       {@code replica.fetch.max.bytes} of 1 MiB holds one 1 MiB batch per fetch, so replication, and every acks=all
 *       produce, would be capped at one batch per W on both sides).
 *   <li><b>S5</b> (exactly-once producers): S1's cluster and producer settings, but the producer is transactional
 *       ({@code transactional.id} = its client id) and commits every {@link #S5_COMMIT_EVERY} records. Each
 *       transaction's commit costs about one W on both sides (the commit markers are written with acks=all, and
 *       the next transaction's first produce waits for them), so the ceiling of kpipe/stock is below S1's: with n
 *       produce requests per transaction, (n + 1) / (n / max.in.flight + 1).
 *   <li><b>S9</b> (slow readers beside a good producer): S1's cluster at a short W (2 ms unless {@code
 *       --window-ms}), S1's producer flat out to its own topic, beside N raw connections to the leader
 *       ({@link SlowReaders}) that write ~31 KiB acks=all produce requests to a second topic on the same replicas as
 *       fast as the socket takes them and never read a response: does the good producer's acknowledgement stream
 *       stall longer on kpipe than on stock?
 *   <li><b>S10</b> (connections at scale): one broker, N raw connections ({@link S10Round}), each upgraded by one
 *       acks=1 produce request; one in ten then produces 1 request/s, the others stay idle: the leader's heap per
 *       connection (class histogram), CPU per produce request and the cost of kpipe's connection dump.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
final class Scenarios {
    /** S5: records per transaction. */
    static final int S5_COMMIT_EVERY = 500;

    /**
     * S5 option: how long a broker retries adding a partition to a transaction while the coordinator still completes
     * the previous one (Kafka's {@code AddPartitionsToTxnConfig}, default 100 ms) before it answers
     * {@code CONCURRENT_TRANSACTIONS}.
     */
    static final String S5_ADD_PARTITIONS_RETRY_MAX_MS = "add.partitions.to.txn.retry.backoff.max.ms";

    private Scenarios() {}

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (record size, batch size, buffer)
     * @return scenario S1 at that window
     */
    static Scenario s1(int windowMs, BenchOptions o) {
        return s1Builder(windowMs, o).build();
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (record size, batch size, buffer)
     * @param client the producer client ({@code --client}); its idempotence and in-flight bound replace S1's
     * @return scenario S1 at that window with that client, labelled {@code S1 W=<W>ms <client>}
     */
    static Scenario s1(int windowMs, BenchOptions o, BenchClient client) {
        return s1Builder(windowMs, o)
                .client(client)
                .label("S1 W=" + windowMs + "ms " + client.id)
                .topic("bench-s1-" + client.id)
                .build();
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (record size, batch size, buffer)
     * @return scenario S5 at that window: S1 with one transactional producer committing every {@link
     *     #S5_COMMIT_EVERY} records; with {@link MeasureOptions#s5AddPartitionsRetryMaxMs} set, every broker of both
     *     sides has that {@code add.partitions.to.txn.retry.backoff.max.ms}
     */
    static Scenario s5(int windowMs, BenchOptions o) {
        int retryMaxMs = o.measure().s5AddPartitionsRetryMaxMs();
        ScenarioBuilder b = s1Builder(windowMs, o).id("S5").commitEvery(S5_COMMIT_EVERY);
        if (retryMaxMs == 0) {
            return b.label("S5 W=" + windowMs + "ms").build();
        }
        return b.nodeConfigOnEveryNode(S5_ADD_PARTITIONS_RETRY_MAX_MS, Integer.toString(retryMaxMs))
                .label("S5 W=" + windowMs + "ms add-retry " + retryMaxMs + "ms")
                .build();
    }

    /**
     * @param o the options: {@link MeasureOptions#s1lWindowMs}, {@link MeasureOptions#s1lFollowerFetchMaxBytes}
     * @return scenario S1L: S1 with 1 MiB batches, linger 50 ms and 32 MiB {@code buffer.memory}
     */
    static Scenario s1Large(BenchOptions o) {
        MeasureOptions m = o.measure();
        int w = m.s1lWindowMs();
        int fetchMax = m.s1lFollowerFetchMaxBytes();
        String fetch = fetchMax == MeasureOptions.KAFKA_DEFAULT_REPLICA_FETCH_MAX_BYTES
                ? ""
                : " fetch.max " + fetchMax / (1024 * 1024) + "MiB";
        // The benchmark cluster's config, the same on both sides: with Kafka's default replica.fetch.max.bytes (1 MiB
        // per partition per fetch) one delayed fetch carries one 1 MiB batch, so the follower, and every acks=all
        // produce, is capped at one batch per W whatever the leader pipelines (docs/benchmark.md, S1 large batches).
        return followerFetchMax(slowFollower(w), fetchMax, Math.max(10 * 1024 * 1024, 2 * fetchMax))
                .id("S1L")
                .label("S1L W=" + w + "ms" + fetch)
                .topic("bench-s1l")
                .recordBytes(o.s1RecordBytes())
                .batchBytes(1024 * 1024)
                .lingerMs(50)
                .bufferBytes(32L * 1024 * 1024)
                .build();
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options (producers, budget, record size, buffer)
     * @return scenario S3 at that window
     */
    static Scenario s3(int windowMs, BenchOptions o) {
        // Kafka's default replica.fetch.max.bytes (1 MiB per partition per fetch) would cap replication, and so every
        // acks=all produce, at 1 MiB per window: the follower takes what the producers send, so the budget decides.
        return followerFetchMax(slowFollower(windowMs), 64 * 1024 * 1024, 128 * 1024 * 1024)
                .id("S3")
                .label("S3 " + o.s3Producers() + " producers, budget " + o.s3BudgetBytes() / 1024 + " KiB, W="
                        + windowMs + "ms")
                .topic("bench-s3")
                .producers(o.s3Producers())
                .recordBytes(o.s3RecordBytes())
                .batchBytes(o.batchBytes())
                .bufferBytes(o.s3BufferBytes())
                .kpipeConfig("kpipe.max.inflight.bytes", Long.toString(o.s3BudgetBytes()))
                .kpipeConfig("kpipe.max.inflight.bytes.per.connection", Long.toString(64L * 1024 * 1024))
                .build();
    }

    /**
     * @param o the options (producer count, record size, batch size, buffer, A/A)
     * @return scenario S2
     */
    static Scenario s2(BenchOptions o) {
        return oneBroker(Math.max(1, o.s2Producers()))
                .id("S2")
                .label("S2")
                .topic("bench-s2")
                .producers(o.s2Producers())
                .recordBytes(o.s2RecordBytes())
                .batchBytes(o.batchBytes())
                .bufferBytes(o.s2BufferBytes())
                .aaControl(o.measure().aaControl())
                .build();
    }

    /**
     * @param o the options: {@link MeasureOptions#s2fRecordsPerSec}, producers, A/A; batch size from {@code o}
     * @return scenario S2F: S2 at a fixed offered load of 1 KiB records
     */
    static Scenario s2Fixed(BenchOptions o) {
        MeasureOptions m = o.measure();
        return oneBroker(m.s2fProducers())
                .id("S2F")
                .label("S2F " + m.s2fRecordsPerSec() + " rec/s")
                .topic("bench-s2f")
                .producers(m.s2fProducers())
                .recordBytes(1024)
                .batchBytes(o.batchBytes())
                .bufferBytes(4L * 1024 * 1024)
                .offeredRecordsPerSec(m.s2fRecordsPerSec())
                .aaControl(m.aaControl())
                .build();
    }

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options: {@link MeasureOptions#s8RecordsPerSec}, {@link MeasureOptions#s8Producers}, {@link
     *     MeasureOptions#s8LingerMs}, A/A; batch size from {@code o}
     * @return scenario S8 at that window: N acks=all producers, one partition and connection each, at a fixed load
     */
    static Scenario s8(int windowMs, BenchOptions o) {
        MeasureOptions m = o.measure();
        int n = m.s8Producers();
        ScenarioBuilder b = slowFollower(windowMs)
                .id("S8")
                .label("S8 W=" + windowMs + "ms " + n + " producers " + m.s8RecordsPerSec() + " rec/s")
                .topic("bench-s8")
                .producers(n)
                .partitionPerProducer()
                .recordBytes(1024)
                .batchBytes(o.batchBytes())
                .lingerMs(m.s8LingerMs())
                .kpipeLingerMs(m.s8KpipeLingerMs())
                .bufferBytes(1024L * 1024)
                .offeredRecordsPerSec(m.s8RecordsPerSec())
                .aaControl(m.aaControl());
        for (int p = 1; p < n; p++) { // slowFollower added partition 0
            b.replicas(p, List.of(1, 2));
        }
        return b.build();
    }

    /** S9: the slow readers' topic, on the same replicas as the good producer's. */
    static final String S9_SLOW_TOPIC = "bench-s9-slow";

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options: S1's producer settings, {@link RawOptions#s9SlowReaders}, {@link RawOptions#s9Active},
     *     {@link RawOptions#s9GoodRate}
     * @return scenario S9 at that window: S1's cluster and producer (its own topic) beside the slow readers
     */
    static Scenario s9(int windowMs, BenchOptions o) {
        int n = o.raw().s9SlowReaders();
        boolean active = o.raw().s9Active();
        int rate = o.raw().s9GoodRate();
        return s1Builder(windowMs, o)
                .id("S9")
                .label("S9 W=" + windowMs + "ms " + n + (active ? " active" : "") + " slow readers"
                        + (rate > 0 ? " good producer " + rate + " rec/s" : ""))
                .topic("bench-s9")
                .slowReaders(n, S9_SLOW_TOPIC, active)
                .offeredRecordsPerSec(rate)
                .build();
    }

    /**
     * @param connections the raw connections
     * @param o the options (unused today: S10's settings are fixed)
     * @return scenario S10: one broker, {@code connections} raw connections each upgraded by one acks=1 produce of one
     *     100 B record, one in ten producing 1 request/s afterwards ({@link S10Round})
     */
    static Scenario s10(int connections, BenchOptions o) {
        return oneBroker(1)
                .id("S10")
                .label("S10 " + connections + " connections")
                .topic("bench-s10")
                .fixedPartition(0)
                .producers(0)
                .recordBytes(100)
                .connections(connections)
                .build();
    }

    /** S11: the excluded producers' topic ({@code kpipe.topics.exclude} on the kpipe side). */
    static final String S11_EXCLUDED_TOPIC = "bench-s11-excluded";

    /**
     * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}
     * @param o the options: {@link FleetOptions}; batch size from {@code o}
     * @return scenario S11 at that window: S8's producers (acks=all, idempotent, linger 5 ms, 1 KiB records, one
     *     partition and connection each, a fixed offered load) in two groups, most on a topic kpipe excludes
     */
    static Scenario s11(int windowMs, BenchOptions o) {
        FleetOptions f = o.fleet();
        int n = f.pipelinedProducers();
        ScenarioBuilder b = slowFollower(windowMs)
                .id("S11")
                .label("S11 W=" + windowMs + "ms " + f.excludedProducers() + " excluded + " + n + " pipelined")
                .topic("bench-s11")
                .producers(n)
                .partitionPerProducer()
                .recordBytes(1024)
                .batchBytes(o.batchBytes())
                .lingerMs(5)
                .bufferBytes(1024L * 1024)
                .offeredRecordsPerSec(f.pipelinedRecordsPerSec())
                .excludedFleet(f.excludedProducers(), f.excludedRecordsPerSec(), S11_EXCLUDED_TOPIC, List.of(1, 2));
        for (int p = 1; p < n; p++) { // slowFollower added partition 0
            b.replicas(p, List.of(1, 2));
        }
        return b.build();
    }

    /** S1's settings at window W, for S1 itself and S5. */
    private static ScenarioBuilder s1Builder(int windowMs, BenchOptions o) {
        return slowFollower(windowMs)
                .id("S1")
                .label("S1 W=" + windowMs + "ms")
                .topic("bench-s1")
                .recordBytes(o.s1RecordBytes())
                .batchBytes(o.batchBytes())
                .bufferBytes(o.s1BufferBytes());
    }

    /**
     * The slow-follower family (S1, S1L, S3, S5): 2 nodes; node 2, the follower, waits up to W for {@link
     * Scenario#FOLLOWER_FETCH_MIN_BYTES}; one partition led by node 1 on [1,2] with {@code min.insync.replicas=2},
     * every record into it; idempotent producers, acks=all, 5 in flight, linger 0.
     */
    private static ScenarioBuilder slowFollower(int windowMs) {
        return Scenario.builder()
                .windowMs(windowMs)
                .nodes(2)
                .nodeConfig(2, "replica.fetch.min.bytes", Integer.toString(Scenario.FOLLOWER_FETCH_MIN_BYTES))
                .nodeConfig(2, "replica.fetch.wait.max.ms", Integer.toString(windowMs))
                .replicas(0, List.of(1, 2))
                .topicConfig("min.insync.replicas", "2")
                .fixedPartition(0)
                .acks("all")
                .idempotence(true)
                .maxInFlight(5)
                .lingerMs(0);
    }

    /**
     * The one-broker family (S2, S2F): 1 node, {@code partitions} partitions on it, the producers' partitioner
     * spreading the records; acks=1, not idempotent, 5 in flight, linger 5 ms.
     */
    /**
     * @param b a {@link #slowFollower} scenario
     * @param perPartitionBytes the follower's {@code replica.fetch.max.bytes}
     * @param perResponseBytes the follower's {@code replica.fetch.response.max.bytes}
     * @return {@code b}, its follower (node 2) fetching up to these sizes
     */
    private static ScenarioBuilder followerFetchMax(ScenarioBuilder b, int perPartitionBytes, int perResponseBytes) {
        return b.nodeConfig(2, "replica.fetch.max.bytes", Integer.toString(perPartitionBytes))
                .nodeConfig(2, "replica.fetch.response.max.bytes", Integer.toString(perResponseBytes));
    }

    private static ScenarioBuilder oneBroker(int partitions) {
        ScenarioBuilder b = Scenario.builder().nodes(1);
        for (int p = 0; p < partitions; p++) {
            b.replicas(p, List.of(1));
        }
        return b.fixedPartition(-1).acks("1").idempotence(false).maxInFlight(5).lingerMs(5);
    }
}
