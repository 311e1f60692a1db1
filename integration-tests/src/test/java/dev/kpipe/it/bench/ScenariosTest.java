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
        Map<String, Object> p = s.producerConfig("b:9092", "c1");
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
        assertEquals(false, java.producerConfig("b:9092", "c").get("enable.idempotence"));
        assertEquals(5, java.producerConfig("b:9092", "c").get("max.in.flight.requests.per.connection"));
        assertFalse(Scenarios.s1(100, o).describe().containsKey("client"), "S1 without --client as before");
    }

    @Test
    void s5IsS1TransactionalWithTheAddRetryOnEveryNode() {
        Scenario plain = Scenarios.s5(100, options());
        assertEquals("S5 W=100ms", plain.label);
        assertEquals("bench-s1", plain.topic);
        assertEquals(Scenarios.S5_COMMIT_EVERY, plain.commitEvery);
        assertEquals("c1", plain.producerConfig("b", "c1").get("transactional.id"));
        Scenario retry = Scenarios.s5(100, options("--s5-add-partitions-retry-max-ms", "20"));
        assertEquals("S5 W=100ms add-retry 20ms", retry.label);
        assertEquals(
                "{1={add.partitions.to.txn.retry.backoff.max.ms=20}, 2={replica.fetch.min.bytes=1000000000,"
                        + " replica.fetch.wait.max.ms=100, add.partitions.to.txn.retry.backoff.max.ms=20}}",
                retry.describe().get("node_config"));
        assertEquals(Scenarios.S5_ADD_PARTITIONS_RETRY_MAX_MS, "add.partitions.to.txn.retry.backoff.max.ms");
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
