// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.KpipeLog;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.RawKafkaConnection;
import dev.kpipe.plugin.classify.PipelinedApi;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * kpipe's metrics read over JMX from a real broker ({@value KpipeJmx#KPIPE_MBEAN}, beside the broker's own MBeans),
 * each checked against the traffic the test drives, and the broker log of the whole run checked for kpipe's log
 * hygiene.
 *
 * <p>One 2-node cluster for the class. Node 2 follows with {@code replica.fetch.min.bytes} far above what the tests
 * produce and {@code replica.fetch.wait.max.ms=1000}, so an acks=all produce to a topic replicated on both nodes waits
 * for the follower's next fetch (up to 1 s); an acks=1 produce and topics on node 1 alone are answered at once. A
 * client first waits for one acks=all response, which puts the follower's next fetch about 1 s ahead: the window in
 * which the test reads the gauges while requests are in flight. The broker-wide byte budget is 1 MiB and the quota
 * window 2 x 1 s, so budget waits and throttle windows are short.
 */
@KafkaCluster(
        nodes = 2,
        brokerConfig = {"kpipe.max.inflight.bytes=1048576", "quota.window.num=2", "quota.window.size.seconds=1"},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=1000"})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MetricsJmxIT {

    /** The metrics that are not per API. */
    private static final Set<String> BROKER_WIDE = new TreeSet<>(List.of(
            "pipelined-connections",
            "inflight-requests",
            "inflight-requests-per-connection-avg",
            "inflight-requests-per-connection-max",
            "held-responses",
            "held-requests",
            "throttled-connections",
            "upgrade-total",
            "upgrade-deferred-total",
            "downgrade-total",
            "drain-total",
            "drain-time-ms-total",
            "pipelined-request-total",
            "throttle-window-total",
            "throttle-time-ms-total",
            "inflight-bytes",
            "inflight-bytes-max",
            "inflight-bytes-limit",
            "budget-waiting-connections",
            "budget-wait-total",
            "budget-wait-time-ms-total",
            "budget-oversize-admitted-total",
            "budget-reservation-revoked-total",
            "classification-fallback-total",
            "plugin-fault-total",
            "connections-tracked",
            "deferred-close-total",
            "orphaned-receive-total",
            "reauthentication-drain-total",
            "processor-wakeup-total",
            "deferred-dispatch-total",
            "deferred-dispatch-fallback-total",
            // one per counted WaitReason (KpipeMetrics derives them from the enum; a new reason must be added here and
            // to
            // docs/monitoring.md's table of series, which DashboardTest checks against this list)
            "wait-awaiting-dispatch-total",
            "wait-awaiting-append-total",
            "wait-budget-total",
            "wait-inflight-limit-total",
            "wait-undrained-total",
            "wait-storage-pressure-total",
            "wait-throttled-total",
            "wait-client-throttled-total",
            "wait-drain-exclusive-total",
            "wait-drain-reauthentication-total",
            "wait-drain-disabled-total",
            "wait-close-after-drain-total"));

    /**
     * Every metric of kpipe's MBean; the README's metrics table lists the same: {@link #BROKER_WIDE} and, per row of
     * the table of pipelined APIs, {@code pipelined-<api>-total} and {@code inflight-<api>-per-connection-max}.
     */
    static final Set<String> METRICS = withPerApiMetrics();

    /** @return {@link #BROKER_WIDE} and two per row of {@link PipelinedApi}, named with the API's name in kebab case */
    private static Set<String> withPerApiMetrics() {
        Set<String> all = new TreeSet<>(BROKER_WIDE);
        for (PipelinedApi row : PipelinedApi.values()) {
            String api = row.name().toLowerCase(Locale.ROOT).replace('_', '-');
            all.add("pipelined-" + api + "-total");
            all.add("inflight-" + api + "-per-connection-max");
        }
        return all;
    }

    private static final long BUDGET = 1_048_576;
    /** Acknowledged only after the follower's next fetch (up to 1 s). */
    private static final String SLOW = "metrics-slow";
    /** Same, for the budget test. */
    private static final String SLOW_BUDGET = "metrics-slow-budget";
    /** On node 1 alone: acknowledged at once. */
    private static final String FAST = "metrics-fast";

    private static final Duration WINDOW = Duration.ofSeconds(5);

    @BeforeAll
    static void topics(Cluster cluster) {
        Map<String, String> minIsr2 = Map.of("min.insync.replicas", "2");
        cluster.createTopics(
                List.of(
                        new NewTopic(SLOW, Map.of(0, List.of(1, 2))).configs(minIsr2),
                        new NewTopic(SLOW_BUDGET, Map.of(0, List.of(1, 2))).configs(minIsr2),
                        new NewTopic(FAST, Map.of(0, List.of(1)))),
                Duration.ofSeconds(60));
    }

    /**
     * One raw connection: an acks=all produce (upgrades the connection), then 8 produces written back to back
     * alternating acks=all and acks=1, then an exclusive LIST_OFFSETS. While the acks=all ones wait for the follower:
     * 1 pipelined connection with 8 requests in flight (avg 8, max at least 8), the 4 acks=1 responses held behind the
     * first acks=all one, the LIST_OFFSETS held (1 drain), the 8 requests' bytes in the budget. Then every response in
     * order, 1 downgrade, the drain time within the LIST_OFFSETS round trip, an upgrade again on the next produce, and
     * every gauge back to 0 after the connection closes.
     */
    @Test
    @Order(1)
    void upgradeInflightHeldResponsesDrainAndDowngradeFollowTheTraffic(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        KpipeMetricsSnapshot before = KpipeMetricsSnapshot.awaitIdle(node);
        String clientId = "metrics-drain";
        List<String> values = new ArrayList<>();
        long sendListOffsetsNanos;
        long listOffsetsAnsweredNanos;
        KpipeMetricsSnapshot during;
        KpipeMetricsSnapshot afterDrain;
        long requestBytes = 0;
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), clientId, Duration.ofSeconds(30))) {
            int correlationId = 1000;
            values.add("m0");
            conn.send(correlationId, Wire.produce(SLOW, 0, (short) -1, Wire.bytes("m0")));
            Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), correlationId);
            KpipeMetricsSnapshot upgraded = KpipeMetricsSnapshot.read(node);
            assertEquals(1.0, upgraded.delta(before, "upgrade-total"), "the first produce upgraded the connection");
            assertEquals(1.0, upgraded.get("pipelined-connections"), "one pipelined connection");

            // 8 produces back to back, odd ones acks=all (wait for the follower), even ones acks=1 (answered at once).
            List<Integer> ids = new ArrayList<>();
            for (int i = 1; i <= 8; i++) {
                String v = "m" + i;
                values.add(v);
                ProduceRequest p = Wire.produce(SLOW, 0, (short) (i % 2 == 1 ? -1 : 1), Wire.bytes(v));
                int id = correlationId + 7 * i; // not contiguous, as the Java client's ids on one connection
                requestBytes += Wire.sizeInBytes(p, clientId, id);
                conn.send(id, p);
                ids.add(id);
            }
            int listOffsetsId = -5; // any int
            sendListOffsetsNanos = System.nanoTime();
            conn.send(listOffsetsId, Wire.listOffsets(SLOW));

            during = KpipeMetricsSnapshot.await(
                    node,
                    "8 requests in flight, 4 responses and the LIST_OFFSETS held",
                    WINDOW,
                    s -> s.get("inflight-requests") == 8
                            && s.get("held-responses") == 4
                            && s.get("held-requests") == 1);
            for (int i = 0; i < ids.size(); i++) {
                Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), ids.get(i));
            }
            RawKafkaConnection.Received lo = conn.receive(ApiKeys.LIST_OFFSETS, Wire.LIST_OFFSETS_VERSION);
            listOffsetsAnsweredNanos = System.nanoTime();
            assertEquals(listOffsetsId, lo.correlationId(), "LIST_OFFSETS answered after every earlier produce");
            afterDrain = KpipeMetricsSnapshot.await(
                    node, "the connection handed back to classic", WINDOW, s -> s.get("pipelined-connections") == 0);

            // Classic again: the next produce upgrades it again.
            values.add("m9");
            conn.send(correlationId + 100, Wire.produce(SLOW, 0, (short) 1, Wire.bytes("m9")));
            Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), correlationId + 100);
            assertEquals(2.0, KpipeMetricsSnapshot.read(node).delta(before, "upgrade-total"), "upgraded again");
        }
        KpipeMetricsSnapshot after = KpipeMetricsSnapshot.awaitIdle(node);

        assertEquals(1.0, during.get("pipelined-connections"), "pipelined connections while requests are in flight");
        assertEquals(
                8.0, during.get("inflight-requests-per-connection-avg"), "requests in flight per connection (avg)");
        assertTrue(
                during.get("inflight-requests-per-connection-max") >= 8, "requests in flight on one connection (max)");
        assertEquals(1.0, during.delta(before, "drain-total"), "the LIST_OFFSETS started one drain");
        assertEquals(0.0, during.delta(before, "downgrade-total"), "not handed back while draining");
        assertEquals(
                (double) requestBytes,
                during.get("inflight-bytes"),
                "budget in use = the bytes of the 8 unanswered requests (no reservation while draining)");
        assertEquals(0.0, during.get("budget-waiting-connections"));
        assertEquals(0.0, during.get("throttled-connections"));
        assertEquals(
                9.0, during.delta(before, "pipelined-request-total"), "m0..m8 admitted on the pipelined connection");

        assertEquals(1.0, afterDrain.delta(before, "downgrade-total"), "handed back to classic after the drain");
        double drainMs = afterDrain.delta(before, "drain-time-ms-total");
        double roundTripMs = (listOffsetsAnsweredNanos - sendListOffsetsNanos) / 1e6;
        assertTrue(
                drainMs > 0 && drainMs <= roundTripMs,
                "drain time " + drainMs + " ms within the LIST_OFFSETS round trip " + roundTripMs + " ms");

        assertEquals(2.0, after.delta(before, "upgrade-total"));
        assertEquals(0.0, after.delta(before, "upgrade-deferred-total"), "the budget had room for every upgrade");
        assertEquals(1.0, after.delta(before, "drain-total"));
        assertEquals(10.0, after.delta(before, "pipelined-request-total"), "m0..m8 and m9");
        assertEquals(values, readValues(cluster, SLOW, values.size()), "every record once, in order");
    }

    /**
     * Budget in use and waits: 1 MiB budget, one connection writing five 300,000-byte acks=all produces back to back.
     * Three fit (the reservation for a fourth would exceed the budget), so the connection waits for the budget until the
     * follower acknowledges the first ones; meanwhile another connection's first produce finds no room (a connection
     * waits ahead of it) and its upgrade is deferred.
     */
    @Test
    @Order(2)
    void byteBudgetInUseAndWaitsFollowTheTraffic(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        KpipeMetricsSnapshot before = KpipeMetricsSnapshot.awaitIdle(node);
        assertEquals(
                (double) BUDGET,
                before.get("inflight-bytes-limit"),
                "inflight-bytes-limit is kpipe.max.inflight.bytes");
        int size = 300_000;
        List<String> values = new ArrayList<>();
        KpipeMetricsSnapshot waiting;
        KpipeMetricsSnapshot deferred;
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), "metrics-budget", Duration.ofSeconds(30))) {
            values.add("b0");
            conn.send(1, Wire.produce(SLOW_BUDGET, 0, (short) -1, Wire.bytes("b0")));
            Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 1);
            for (int i = 1; i <= 5; i++) {
                byte[] v = Arrays.copyOf(Wire.bytes("b" + i + ":"), size);
                values.add(new String(v, StandardCharsets.UTF_8));
                conn.send(1 + i, Wire.produce(SLOW_BUDGET, 0, (short) -1, v));
            }
            waiting = KpipeMetricsSnapshot.await(
                    node,
                    "the connection waiting for the byte budget",
                    WINDOW,
                    s -> s.get("budget-waiting-connections") == 1);
            // A new connection whose produce would upgrade it finds a connection waiting ahead of it: no room now, so
            // the
            // produce is handled classically (a deferred upgrade) and answered.
            try (RawKafkaConnection late =
                    new RawKafkaConnection("127.0.0.1", node.port(), "metrics-budget-late", Duration.ofSeconds(30))) {
                late.send(7, Wire.produce(FAST, 0, (short) 1, Wire.bytes("late")));
                Wire.assertProduced(late.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 7);
            }
            deferred = KpipeMetricsSnapshot.read(node);
            for (int i = 1; i <= 5; i++) {
                Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 1 + i);
            }
        }
        KpipeMetricsSnapshot after = KpipeMetricsSnapshot.awaitIdle(node);
        assertTrue(
                waiting.get("inflight-bytes") >= 3.0 * size,
                "3 requests in the budget while waiting: " + waiting.get("inflight-bytes"));
        assertEquals(
                1.0, deferred.delta(before, "upgrade-deferred-total"), "the late connection's upgrade was deferred");
        assertTrue(after.delta(before, "budget-wait-total") >= 1, "at least one budget wait");
        assertTrue(after.delta(before, "budget-wait-time-ms-total") > 0, "budget wait time");
        assertTrue(after.get("inflight-bytes-max") >= 3.0 * size, "peak budget use " + after.get("inflight-bytes-max"));
        assertEquals(0.0, after.delta(before, "budget-oversize-admitted-total"), "no request as large as the budget");
        assertEquals(values, readValues(cluster, SLOW_BUDGET, values.size()), "every record once, in order");
    }

    /**
     * Throttled connections: a client id with {@code producer_byte_rate=10240} writes 25,000-byte produces on a
     * pipelined connection until the broker answers one with {@code throttle_time_ms > 0}; while Kafka's throttle
     * window is open kpipe counts 1 throttled connection, afterwards 0, one more throttle window and at least 90% of
     * the throttle time the broker announced.
     */
    @Test
    @Order(3)
    void throttledConnectionsFollowTheClientQuota(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        String clientId = "metrics-throttled";
        ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, clientId));
        cluster.admin()
                .alterClientQuotas(
                        List.of(new ClientQuotaAlteration(
                                entity, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 10_240.0)))),
                        new AlterClientQuotasOptions())
                .all()
                .get();
        KpipeMetricsSnapshot before = KpipeMetricsSnapshot.awaitIdle(node);
        int throttleMs = 0;
        KpipeMetricsSnapshot throttled;
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), clientId, Duration.ofSeconds(30))) {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            int id = 0;
            // The quota reaches the broker through the metadata log: produce until a response carries a throttle time.
            while (throttleMs == 0) {
                assertTrue(System.nanoTime() < deadline, "no throttled response within 30 s");
                // 25 kB against 10 kB/s over Kafka's 1-2 s quota window: a throttle window of about 1.5 s.
                conn.send(++id, Wire.produce(FAST, 0, (short) 1, new byte[25_000]));
                ProduceResponse r = Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), id);
                throttleMs = r.throttleTimeMs();
            }
            throttled = KpipeMetricsSnapshot.await(
                    node,
                    "1 throttled connection",
                    Duration.ofMillis(throttleMs + 5_000L),
                    s -> s.get("throttled-connections") == 1);
            KpipeMetricsSnapshot.await(
                    node,
                    "the throttle window closed",
                    Duration.ofMillis(throttleMs + 5_000L),
                    s -> s.get("throttled-connections") == 0);
        }
        KpipeMetricsSnapshot after = KpipeMetricsSnapshot.awaitIdle(node);
        System.out.printf(
                "MetricsJmxIT: throttle_time_ms %d announced, kpipe counted %.0f ms throttled%n",
                throttleMs, after.delta(before, "throttle-time-ms-total"));
        assertEquals(1.0, throttled.get("pipelined-connections"));
        assertTrue(after.delta(before, "throttle-window-total") >= 1, "throttle windows");
        double throttledMs = after.delta(before, "throttle-time-ms-total");
        assertTrue(
                throttledMs >= 0.9 * throttleMs,
                "throttled " + throttledMs + " ms, the broker announced " + throttleMs + " ms");
        assertTrue(after.delta(before, "upgrade-total") >= 1);
    }

    /**
     * The MBean: in the broker's own {@code kafka.server} domain beside its MBeans, with exactly the metrics the README
     * lists, each described and non-negative; classification never fell back and no fault was caught for the well-formed
     * traffic of this class.
     */
    @Test
    @Order(4)
    void mbeanSitsBesideTheBrokersOwnWithEveryMetricDescribed(Cluster cluster) throws Exception {
        for (KafkaNode node : cluster.nodes()) {
            MBeanServerConnection jmx = node.jmx();
            ObjectName kpipe = new ObjectName(KpipeJmx.KPIPE_MBEAN);
            assertTrue(jmx.isRegistered(kpipe), kpipe + " registered on node " + node.id());
            assertEquals("kafka.server", kpipe.getDomain());
            assertFalse(
                    jmx.queryNames(new ObjectName("kafka.server:type=BrokerTopicMetrics,*"), null)
                            .isEmpty(),
                    "the broker's own kafka.server MBeans are there too");
            assertFalse(
                    jmx.queryNames(new ObjectName("kafka.server:type=socket-server-metrics,*"), null)
                            .isEmpty(),
                    "the broker's own Kafka-metrics MBeans are there too");
            MBeanAttributeInfo[] infos = jmx.getMBeanInfo(kpipe).getAttributes();
            assertEquals(
                    METRICS,
                    Arrays.stream(infos)
                            .map(MBeanAttributeInfo::getName)
                            .collect(Collectors.toCollection(TreeSet::new)),
                    "kpipe's metrics on node " + node.id());
            for (MBeanAttributeInfo info : infos) {
                assertFalse(
                        info.getDescription() == null || info.getDescription().isBlank(),
                        info.getName() + " described");
            }
            KpipeMetricsSnapshot s = KpipeMetricsSnapshot.read(node);
            s.values().forEach((k, v) -> assertTrue(v >= 0, k + " = " + v));
            assertEquals(
                    0.0, s.get("classification-fallback-total"), "classification never failed on node " + node.id());
            assertEquals(0.0, s.get("plugin-fault-total"), "no throwable caught in kpipe on node " + node.id());
        }
    }

    /**
     * Log hygiene: each node's log of this whole run (pipelining, drains, downgrades, budget waits, throttling) has
     * exactly one record from kpipe, the INFO start line, and no WARN or ERROR about kpipe; thousands more pipelined
     * requests (a Java idempotent producer sending small batches, and a raw connection alternating 9 produces and an
     * exclusive request 40 times) add no kpipe record.
     */
    @Test
    @Order(5)
    void oneInfoLineAtStartAndNothingPerRequest(Cluster cluster) throws Exception {
        for (KafkaNode node : cluster.nodes()) {
            assertLogHygiene(node);
        }
        KafkaNode node = cluster.node(1);
        int kpipeRecordsBefore = kpipeRecords(node).size();
        KpipeMetricsSnapshot before = KpipeMetricsSnapshot.awaitIdle(node);

        Map<String, Object> cfg = cluster.clientConfig();
        cfg.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        cfg.put(ProducerConfig.ACKS_CONFIG, "all");
        cfg.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        cfg.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        cfg.put(ProducerConfig.BATCH_SIZE_CONFIG, 200); // a handful of records per request
        cfg.put(ProducerConfig.CLIENT_ID_CONFIG, "metrics-log-hygiene");
        AtomicReference<Exception> failure = new AtomicReference<>();
        int records = 20_000;
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(cfg, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(FAST, 0, null, Wire.bytes("h" + i)), (md, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        assertEquals(null, failure.get(), "no send failed");
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), "metrics-log-raw", Duration.ofSeconds(30))) {
            int id = 0;
            for (int round = 0; round < 40; round++) {
                List<Integer> ids = new ArrayList<>();
                for (int i = 0; i < 9; i++) {
                    conn.send(++id, Wire.produce(FAST, 0, (short) 1, Wire.bytes("r" + id)));
                    ids.add(id);
                }
                conn.send(++id, Wire.listOffsets(FAST));
                for (int pid : ids) {
                    Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), pid);
                }
                assertEquals(
                        id,
                        conn.receive(ApiKeys.LIST_OFFSETS, Wire.LIST_OFFSETS_VERSION)
                                .correlationId());
            }
        }
        KpipeMetricsSnapshot after = KpipeMetricsSnapshot.awaitIdle(node);
        double pipelined = after.delta(before, "pipelined-request-total");
        System.out.printf(
                "MetricsJmxIT: %.0f pipelined requests, %.0f upgrades, %.0f downgrades while checking the log%n",
                pipelined, after.delta(before, "upgrade-total"), after.delta(before, "downgrade-total"));
        assertTrue(pipelined >= 1_000, "thousands of pipelined requests: " + pipelined);
        assertTrue(after.delta(before, "downgrade-total") >= 40, "an exclusive request handed the raw connection back");
        assertEquals(
                kpipeRecordsBefore, kpipeRecords(node).size(), () -> "kpipe logged per request: " + kpipeRecords(node));
        assertLogHygiene(node);
    }

    private static void assertLogHygiene(KafkaNode node) {
        List<KpipeLog.LogRecord> all = KpipeLog.records(node.log());
        List<KpipeLog.LogRecord> kpipe =
                all.stream().filter(KpipeLog.LogRecord::fromKpipe).collect(Collectors.toList());
        assertEquals(1, kpipe.size(), () -> "exactly one kpipe record in " + node.logFile() + ", got " + kpipe);
        assertEquals("INFO", kpipe.get(0).level());
        assertEquals(1, KpipeLog.startedLines(kpipe.get(0).text()).size(), () -> "the start line: " + kpipe.get(0));
        List<KpipeLog.LogRecord> warnings =
                all.stream().filter(r -> r.warnOrAbove() && r.aboutKpipe()).collect(Collectors.toList());
        assertEquals(List.of(), warnings, "no WARN or ERROR about kpipe in " + node.logFile());
    }

    private static List<KpipeLog.LogRecord> kpipeRecords(KafkaNode node) {
        return KpipeLog.records(node.log()).stream()
                .filter(KpipeLog.LogRecord::fromKpipe)
                .collect(Collectors.toList());
    }

    /** @return the values of partition 0 of {@code topic} from the beginning, exactly {@code expected} of them */
    private static List<String> readValues(Cluster cluster, String topic, int expected) {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 2 * 1024 * 1024);
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            assertEquals((long) expected, consumer.position(tp), "end of " + topic);
        }
        return out;
    }
}
