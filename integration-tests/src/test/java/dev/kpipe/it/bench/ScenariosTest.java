// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The scenarios' settings from the options ({@link Scenarios}, {@link ScenarioBuilder}). No brokers. */
class ScenariosTest {
    private static BenchOptions options(String... args) {
        return BenchOptions.parse(args);
    }

    @Test
    void s1IsOneIdempotentProducerBehindASlowFollower() {
        Scenario s = Scenarios.s1(250, options("--s1-record-bytes", "512", "--s1-buffer-kib", "300"));
        assertEquals("S1 W=250ms", s.label);
        assertEquals(
                List.of(250, 2, 1, 0, 1), List.of(s.windowMs, s.nodes, s.partitions, s.fixedPartition, s.producers));
        assertEquals("all", s.acks);
        assertTrue(s.idempotence);
        assertEquals(List.of(5, 0, 512, 16384), List.of(s.maxInFlight, s.lingerMs, s.recordBytes, s.batchBytes));
        assertEquals(300 * 1024, s.bufferBytes);
        assertEquals(20.0, s.ceilingRequestsPerSec(), 1e-9, "5 in flight / 250 ms");
        assertEquals(
                "{2={replica.fetch.min.bytes=1000000000, replica.fetch.wait.max.ms=250}}",
                s.describe().get("node_config"));
        assertEquals("{0=[1, 2]}", s.describe().get("replica_assignment"));
        assertEquals(Map.of("min.insync.replicas", "2"), s.describe().get("topic_config"));
        Map<String, Object> p = s.producerConfig("b:9092", "c1", Variant.STOCK);
        assertFalse(p.containsKey("transactional.id"));
        assertEquals("all", p.get("acks"));
    }

    /** {@code --client}: S1 with the client's idempotence and in-flight bound, a topic of its own, the rest as S1. */
    @Test
    void s1WithAClientTakesItsIdempotenceAndInFlightBound() {
        BenchOptions o = options();
        Scenario kcat = Scenarios.s1(100, o, BenchClient.KCAT_100);
        assertEquals("S1 W=100ms kcat-100", kcat.label);
        assertEquals("bench-s1-kcat-100", kcat.topic);
        assertFalse(kcat.idempotence);
        assertEquals(100, kcat.maxInFlight);
        assertTrue(kcat.isChildProcessClient());
        assertEquals(
                "kcat (librdkafka), enable.idempotence=false, max.in.flight=100",
                kcat.describe().get("client_settings"));
        assertEquals(List.of(16384, 0, 1024), List.of(kcat.batchBytes, kcat.lingerMs, kcat.recordBytes));

        Scenario js = Scenarios.s1(100, o, BenchClient.KAFKAJS_IDEMPOTENT);
        assertTrue(js.idempotence);
        assertEquals("KafkaJS, idempotent: true, maxInFlightRequests=5", js.client.describe());

        Scenario java = Scenarios.s1(100, o, BenchClient.JAVA);
        assertFalse(java.isChildProcessClient());
        assertEquals(false, java.producerConfig("b:9092", "c", Variant.STOCK).get("enable.idempotence"));
        assertEquals(5, java.producerConfig("b:9092", "c", Variant.STOCK).get("max.in.flight.requests.per.connection"));
        assertFalse(Scenarios.s1(100, o).describe().containsKey("client"), "S1 without --client as before");
    }

    @Test
    void s5IsS1TransactionalWithTheAddRetryOnEveryNode() {
        Scenario plain = Scenarios.s5(100, options());
        assertEquals("S5 W=100ms", plain.label);
        assertEquals("bench-s1", plain.topic);
        assertEquals(Scenarios.S5_COMMIT_EVERY, plain.commitEvery);
        assertEquals("c1", plain.producerConfig("b", "c1", Variant.STOCK).get("transactional.id"));
        Scenario retry = Scenarios.s5(100, options("--s5-add-partitions-retry-max-ms", "20"));
        assertEquals("S5 W=100ms add-retry 20ms", retry.label);
        assertEquals(
                "{1={add.partitions.to.txn.retry.backoff.max.ms=20}, 2={replica.fetch.min.bytes=1000000000,"
                        + " replica.fetch.wait.max.ms=100, add.partitions.to.txn.retry.backoff.max.ms=20}}",
                retry.describe().get("node_config"));
        assertEquals(Scenarios.S5_ADD_PARTITIONS_RETRY_MAX_MS, "add.partitions.to.txn.retry.backoff.max.ms");
    }

    /** S8: S1's cluster at a short W, N producers, each with its own partition (led by node 1), at a fixed load. */
    @Test
    void s8GivesEachProducerItsOwnPartitionAtAFixedLoad() {
        Scenario s = Scenarios.s8(2, options());
        assertEquals("S8 W=2ms 16 producers 6400 rec/s", s.label);
        assertEquals("S8", s.id);
        assertTrue(s.isS8());
        assertEquals("bench-s8", s.topic);
        assertEquals(List.of(2, 2, 16, 16), List.of(s.windowMs, s.nodes, s.partitions, s.producers));
        assertEquals("all", s.acks);
        assertTrue(s.idempotence);
        assertEquals(List.of(5, 5, 1024, 16384), List.of(s.maxInFlight, s.lingerMs, s.recordBytes, s.batchBytes));
        assertEquals(6400, s.offeredRecordsPerSec);
        assertTrue(s.isFixedLoad());
        assertTrue(s.aaControl, "an A/A run by default, as S2F's");
        for (int i = 0; i < 16; i++) {
            assertEquals(i, s.partitionOf(i), "producer i writes partition i only");
        }
        StringBuilder assignment = new StringBuilder("{");
        for (int p = 0; p < 16; p++) {
            assignment.append(p == 0 ? "" : ", ").append(p).append("=[1, 2]");
        }
        assertEquals(assignment.append('}').toString(), s.describe().get("replica_assignment"));
        assertEquals(Map.of("min.insync.replicas", "2"), s.describe().get("topic_config"));
        assertEquals(
                "{2={replica.fetch.min.bytes=1000000000, replica.fetch.wait.max.ms=2}}",
                s.describe().get("node_config"));
        assertEquals(Boolean.TRUE, s.describe().get("partition_per_producer"));
        assertFalse(s.hasCeiling(), "16 connections at a fixed load: no one-connection ceiling");
        assertTrue(Double.isNaN(s.ceilingRequestsPerSec()));
        assertFalse(s.describe().containsKey("ceiling_requests_per_s"));
        assertTrue(s.headline().contains("16 producer(s) (one partition and one connection each)"), s.headline());
        Map<String, Object> p = s.producerConfig("b:9092", "c1", Variant.STOCK);
        assertEquals("all", p.get("acks"));
        assertEquals(true, p.get("enable.idempotence"));
        assertEquals(5, p.get("linger.ms"));

        Scenario small =
                Scenarios.s8(10, options("--s8-producers", "4", "--s8-rate", "2000", "--s8-linger-ms", "0", "--no-aa"));
        assertEquals("S8 W=10ms 4 producers 2000 rec/s", small.label);
        assertEquals(
                List.of(4, 4, 0, 2000),
                List.of(small.partitions, small.producers, small.lingerMs, small.offeredRecordsPerSec));
        assertFalse(small.aaControl);
        assertEquals(3, small.partitionOf(3));
        assertEquals(
                "{0=[1, 2], 1=[1, 2], 2=[1, 2], 3=[1, 2]}", small.describe().get("replica_assignment"));
        Scenario one = Scenarios.s8(1, options("--s8-producers", "1"));
        assertEquals(List.of(1, 1), List.of(one.partitions, one.producers));

        Scenario knob = Scenarios.s8(10, options("--s8-kpipe-linger-ms", "15"));
        assertEquals(5, knob.producerConfig("b", "c", Variant.STOCK).get("linger.ms"), "stock keeps --s8-linger-ms");
        assertEquals(15, knob.producerConfig("b", "c", Variant.KPIPE).get("linger.ms"), "the kpipe side's own");
        assertEquals(15, knob.describe().get("kpipe_linger_ms"));
        assertTrue(knob.headline().contains("linger.ms=5 (kpipe side 15)"), knob.headline());
        assertEquals(5, s.producerConfig("b", "c", Variant.KPIPE).get("linger.ms"), "without it: one linger");
    }

    @Test
    void s9IsS1sProducerBesideSlowReadersOnASecondTopicOfTheSameReplicas() {
        BenchOptions o = options("--scenario", "S9");
        assertEquals(List.of(2), o.raw().s9WindowsMs());
        Scenario s = Scenarios.s9(2, o);
        assertEquals("S9 W=2ms 8 slow readers", s.label);
        assertEquals("S9", s.id);
        assertTrue(s.isS9());
        assertFalse(s.isS10());
        assertEquals(List.of(2, 2, 1, 1), List.of(s.windowMs, s.nodes, s.partitions, s.producers));
        assertEquals(List.of("bench-s9", "bench-s9-slow"), List.of(s.topic, s.sideTopic));
        assertEquals(8, s.slowReaders);
        Scenario s1 = Scenarios.s1(2, o);
        assertEquals(
                s1.producerConfig("b", "c", Variant.KPIPE),
                s.producerConfig("b", "c", Variant.KPIPE),
                "S1's producer: idempotent, acks=all, 5 in flight, 1 KiB records, linger 0");
        assertEquals(0, s.partitionOf(0));
        assertEquals(
                List.of("bench-s9", "bench-s9-slow"),
                s.newTopics().stream().map(t -> t.name()).toList());
        assertEquals(
                s.newTopics().get(0).replicasAssignments(),
                s.newTopics().get(1).replicasAssignments(),
                "the slow readers' topic on the same replicas");
        assertEquals(Map.of(0, List.of(1, 2)), s.newTopics().get(1).replicasAssignments());
        assertEquals(Map.of("min.insync.replicas", "2"), s.newTopics().get(1).configs());
        assertEquals(
                "{2={replica.fetch.min.bytes=1000000000, replica.fetch.wait.max.ms=2}}",
                s.describe().get("node_config"));
        assertFalse(s.hasCeiling(), "a producer beside slow readers: no one-connection ceiling");
        int bytes = SlowReaders.requestBytes("bench-s9-slow");
        assertTrue(bytes > 30 * 1024 && bytes < 32 * 1024, "about 31 KiB: " + bytes);
        assertEquals(bytes, s.describe().get("slow_reader_request_bytes"));
        assertTrue(s.headline().contains("beside 8 slow readers"), s.headline());
        assertEquals(
                "S9 W=5ms 3 slow readers",
                Scenarios.s9(5, options("--window-ms", "5", "--s9-slow-readers", "3")).label);
        Scenario active = Scenarios.s9(2, options("--s9-active"));
        assertEquals("S9 W=2ms 8 active slow readers", active.label);
        assertTrue(active.slowReadersActive);
        assertFalse(s.isFixedLoad(), "flat out unless --s9-good-rate");
        Scenario paced = Scenarios.s9(2, options("--s9-active", "--s9-good-rate", "4000"));
        assertEquals("S9 W=2ms 8 active slow readers good producer 4000 rec/s", paced.label);
        assertTrue(paced.isFixedLoad());
        assertEquals(4000.0, paced.offeredRecordsPerSecOf(0), "one good producer offers it all");
        assertEquals(4000, paced.describe().get("offered_records_per_s"));
        assertEquals(s.producerConfig("b", "c", Variant.KPIPE), paced.producerConfig("b", "c", Variant.KPIPE));
        assertEquals(
                List.of("bench-s1"),
                Scenarios.s1(2, o).newTopics().stream().map(t -> t.name()).toList());
    }

    @Test
    void s10IsRawConnectionsOnOneBrokerOneInTenProducing() {
        Scenario s = Scenarios.s10(1000, options("--scenario", "S10"));
        assertEquals("S10 1000 connections", s.label);
        assertTrue(s.isS10());
        assertFalse(s.isS9());
        assertEquals(List.of(0, 1, 1, 0, 0), List.of(s.windowMs, s.nodes, s.partitions, s.fixedPartition, s.producers));
        assertEquals("1", s.acks);
        assertEquals(1000, s.connections);
        assertEquals(100, S10Round.producing(1000));
        assertEquals(500, S10Round.producing(5000));
        assertEquals(1, S10Round.producing(5), "at least one producing connection");
        assertEquals(100, s.describe().get("producing_connections"));
        assertFalse(s.aaControl);
        assertFalse(s.hasCeiling());
        assertTrue(s.headline().contains("1000 raw connections"), s.headline());
        assertEquals(
                List.of("bench-s10"), s.newTopics().stream().map(t -> t.name()).toList());
    }

    @Test
    void s11PutsTheExcludedProducersOnATopicTheKpipeSideExcludes() {
        BenchOptions o = options("--scenario", "S11");
        Scenario s = Scenarios.s11(2, o);
        assertEquals("S11 W=2ms 50 excluded + 5 pipelined", s.label);
        assertTrue(s.isS11());
        assertFalse(s.isS9());
        assertEquals(List.of(55, 50, 5), List.of(s.allProducers(), s.excludedProducers, s.producers));
        assertEquals(Map.of("kpipe.topics.exclude", "bench-s11-excluded"), s.kpipeConfig);
        assertEquals(
                List.of("bench-s11", "bench-s11-excluded"),
                s.newTopics().stream().map(t -> t.name()).toList());
        assertEquals(5, s.newTopics().get(0).replicasAssignments().size());
        assertEquals(50, s.newTopics().get(1).replicasAssignments().size());
        assertEquals(List.of(1, 2), s.newTopics().get(1).replicasAssignments().get(49));
        assertEquals(
                List.of("bench-s11-excluded", "bench-s11-excluded", "bench-s11"),
                List.of(s.topicOf(0), s.topicOf(49), s.topicOf(50)));
        assertEquals(
                List.of(0, 49, 0, 4),
                List.of(s.partitionOf(0), s.partitionOf(49), s.partitionOf(50), s.partitionOf(54)));
        assertEquals(100.0, s.offeredRecordsPerSecOf(0), "5,000 records/s over 50 excluded producers");
        assertEquals(1000.0, s.offeredRecordsPerSecOf(50), "5,000 records/s over 5 pipelined producers");
        assertFalse(s.hasCeiling());
        assertEquals(
                Scenarios.s8(2, o).producerConfig("b", "c", Variant.KPIPE),
                s.producerConfig("b", "c", Variant.KPIPE),
                "S8's producers: idempotent, acks=all, linger 5 ms");
        assertTrue(s.headline().contains("beside 50 producers"), s.headline());
        assertTrue(s.spec(Variant.KPIPE, o)
                .brokerConfig()
                .get("kpipe.topics.exclude")
                .equals("bench-s11-excluded"));
        assertEquals(null, s.spec(Variant.STOCK, o).brokerConfig().get("kpipe.topics.exclude"));
        assertEquals(
                List.of("S11 W=5ms 50 excluded + 5 pipelined"),
                ScenarioPlan.scenarios(options("--scenario", "S11", "--window-ms", "5")).stream()
                        .map(x -> x.label)
                        .toList());
    }

    @Test
    void theRunPlansOneScenarioPerWindowOrConnectionCount() {
        List<String> labels = ScenarioPlan.scenarios(
                        options("--scenario", "S9,S10,S8", "--window-ms", "1,2", "--s10-connections", "1000,5000"))
                .stream()
                .map(s -> s.label)
                .toList();
        assertEquals(
                List.of(
                        "S9 W=1ms 8 slow readers",
                        "S9 W=2ms 8 slow readers",
                        "S10 1000 connections",
                        "S10 5000 connections",
                        "S8 W=1ms 16 producers 6400 rec/s",
                        "S8 W=2ms 16 producers 6400 rec/s"),
                labels);
        assertEquals(
                List.of("S9 W=2ms 8 slow readers", "S1 W=100ms"),
                ScenarioPlan.scenarios(options("--scenario", "S9,S1")).stream()
                        .map(s -> s.label)
                        .toList(),
                "S9 at its own default W, S1 at the others'");
        assertEquals(List.of(), ScenarioPlan.scenarios(options("--scenario", "S6,S7")));
        assertEquals(
                2,
                ScenarioPlan.commitScenarios(options("--scenario", "S6,S1,S7")).size());
    }

    @Test
    void theOtherScenariosKeepTheirPartitionChoice() {
        assertEquals(0, Scenarios.s1(100, options()).partitionOf(3), "S1: every producer into partition 0");
        assertEquals(null, Scenarios.s2(options()).partitionOf(1), "S2: the partitioner's choice");
        assertTrue(Scenarios.s1(100, options()).hasCeiling());
        assertFalse(Scenarios.s2Fixed(options()).hasCeiling());
    }

    @Test
    void onePartitionPerProducerNeedsAPartitionPerProducer() {
        ScenarioBuilder b = Scenario.builder()
                .id("X")
                .label("X")
                .topic("t")
                .acks("1")
                .replicas(0, List.of(1))
                .producers(2)
                .partitionPerProducer();
        assertEquals(
                "X: 2 producers, one partition each, but 1 partitions",
                assertThrows(IllegalStateException.class, b::build).getMessage());
    }

    @Test
    void s3HasTheBudgetOnTheKpipeSideOnly() {
        Scenario s = Scenarios.s3(100, options("--s3-producers", "40", "--s3-budget-mib", "2"));
        assertEquals("S3 40 producers, budget 2048 KiB, W=100ms", s.label);
        assertEquals(40, s.producers);
        assertEquals(2L << 20, s.budgetBytes());
        assertEquals(
                Map.of("kpipe.max.inflight.bytes", "2097152", "kpipe.max.inflight.bytes.per.connection", "67108864"),
                s.kpipeConfig);
        assertTrue(s.describe().get("node_config").toString().contains("replica.fetch.max.bytes=67108864"));
        assertTrue(Double.isNaN(s.ceilingRequestsPerSec()));
        assertTrue(s.isS3());
    }

    @Test
    void s2SpreadsItsProducersOverOnePartitionEachOnOneBroker() {
        Scenario s = Scenarios.s2(options("--s2-producers", "3"));
        assertEquals(
                List.of(0, 1, 3, -1, 3), List.of(s.windowMs, s.nodes, s.partitions, s.fixedPartition, s.producers));
        assertEquals("{0=[1], 1=[1], 2=[1]}", s.describe().get("replica_assignment"));
        assertEquals("1", s.acks);
        assertFalse(s.idempotence);
        assertEquals(5, s.lingerMs);
        assertTrue(s.aaControl);
        assertFalse(s.describe().containsKey("node_config"));
        assertFalse(s.describe().containsKey("kpipe_side_config"));
    }

    @Test
    void theBuilderNeedsATopicAcksAndAPartition() {
        ScenarioBuilder b = Scenario.builder().id("X").label("X").topic("t").acks("1");
        assertThrows(IllegalStateException.class, b::build, "no partition");
        Scenario x = b.replicas(0, List.of(1)).build();
        assertEquals(1, x.partitions);
        assertThrows(
                NullPointerException.class,
                () -> Scenario.builder()
                        .id("Y")
                        .label("Y")
                        .acks("1")
                        .replicas(0, List.of(1))
                        .build());
        b.replicas(1, List.of(1));
        assertEquals(1, x.partitions, "a built scenario does not change with its builder");
    }
}
