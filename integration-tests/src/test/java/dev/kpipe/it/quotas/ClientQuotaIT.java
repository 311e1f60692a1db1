// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.quotas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.auth.Scram;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.quotas.QuotaLoad.Produced;
import dev.kpipe.it.quotas.QuotaLoad.Timeline;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.management.ObjectName;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Client quotas on pipelined connections: Kafka's quota managers stay authoritative. Every test runs
 * the same load against a kpipe broker and a stock broker (plugin not installed) at the same time and
 * prints both side by side; both clusters have a PLAINTEXT and a SASL_PLAINTEXT (SCRAM-SHA-512)
 * listener.
 *
 * <p>Rates are measured on the consumer side from the broker's append timestamps ({@code
 * LogAppendTime}): key+value bytes appended per second after the first append. Kafka measures a
 * client's rate over {@code quota.window.num} x {@code quota.window.size.seconds} (11 x 1 s, its
 * defaults, set explicitly here); a client that can outrun its quota is let through in a burst each
 * time the oldest sample expires and then throttled for the rest of the window, so the appended bytes
 * grow as a sawtooth with the quota window as period (see the per-second series in the output), and
 * the bytes of any one fixed 20-25 s interval are off by up to a burst (the stock broker itself gives
 * 0.7-1.1 x quota that way). The rate compared is therefore {@link Timeline#windowAveragedRate}: the
 * rate over an interval of {@code LENGTH_S} (one quota window) averaged over every start time within
 * one quota window after a {@code WARMUP_S} warm-up (which excludes the initial burst): data from 5 s
 * to 27 s after the first append. Overrides: {@code -Dkpipe.it.quota.warmup.s}, {@code
 * -Dkpipe.it.quota.length.s}, {@code -Dkpipe.it.quota.samples}.
 *
 * <p>The stock broker is the control: if its rate misses the quota by more than 10% (the machine could
 * not drive the load, e.g. CPU starved), the measurement is repeated once on fresh topics; a miss of
 * kpipe alone fails at once.
 *
 * <p>After every test: no {@code IllegalStateException} in either broker's log, kpipe's {@code
 * plugin-fault-total} is 0.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClientQuotaIT {

    private static final double QUOTA = QuotaLoad.MIB; // producer_byte_rate, bytes/s
    private static final double TOLERANCE = 0.10;
    /** Kafka's {@code quota.window.num} and {@code quota.window.size.seconds} (its defaults, set explicitly). */
    private static final int QUOTA_SAMPLES = Integer.getInteger("kpipe.it.quota.samples", 11);

    private static final int QUOTA_SAMPLE_S = 1;
    /** Kafka's quota window: the period of the burst-and-throttle sawtooth of a client that can outrun its quota. */
    private static final int PERIOD_S = QUOTA_SAMPLES * QUOTA_SAMPLE_S;

    private static final int WARMUP_S = Integer.getInteger("kpipe.it.quota.warmup.s", 5);
    /** Length of each interval whose rate is averaged (see {@link Timeline#windowAveragedRate}). */
    private static final int LENGTH_S = Integer.getInteger("kpipe.it.quota.length.s", PERIOD_S);
    /** Sending time: the measured data reaches WARMUP_S + PERIOD_S + LENGTH_S after the first append. */
    private static final Duration RUN = Duration.ofSeconds(WARMUP_S + PERIOD_S + LENGTH_S + 1);

    private static final int VALUE_SIZE = 8000;
    private static final int BATCH_SIZE = 64 * 1024; // 8 records of 8000 bytes

    /** A broker under test: kpipe or stock. */
    private record Side(String name, Cluster cluster) {
        KafkaNode node() {
            return cluster.node(1);
        }

        boolean kpipe() {
            return cluster.spec().installPlugin();
        }
    }

    private Side stock;
    private Side kpipe;
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @BeforeAll
    void startClusters() throws Exception {
        // In parallel: start-up is mostly waiting. kpipe's broker also lists Kafka's JmxReporter (the default
        // that metric.reporters=KpipePlugin alone replaces), so that its quota metrics are in JMX like stock's.
        Future<Cluster> s = pool.submit(() ->
                Cluster.start(spec("ClientQuotaIT-stock").installPlugin(false).build()));
        Future<Cluster> k = pool.submit(() -> Cluster.start(spec("ClientQuotaIT-kpipe")
                .brokerConfig("metric.reporters", JmxReporter.class.getName() + "," + ClusterSpec.KPIPE_PLUGIN_CLASS)
                .build()));
        try {
            stock = new Side("stock", s.get());
        } finally {
            kpipe = new Side("kpipe", k.get());
        }
    }

    private static ClusterSpec.Builder spec(String name) {
        return ClusterSpec.builder()
                .name(name)
                .saslScramListener(true)
                .brokerConfig("quota.window.num", Integer.toString(QUOTA_SAMPLES))
                .brokerConfig("quota.window.size.seconds", Integer.toString(QUOTA_SAMPLE_S));
    }

    @AfterAll
    void stopClusters() {
        pool.shutdownNow();
        for (Side s : new Side[] {kpipe, stock}) {
            if (s != null) {
                s.cluster().close();
            }
        }
    }

    /** After every test: no IllegalStateException in either broker's log, no fault caught by kpipe. */
    @AfterEach
    void brokersHealthy() throws Exception {
        for (Side s : List.of(stock, kpipe)) {
            assertEquals(List.of(), QuotaLoad.illegalStates(s.node()), s.name() + " broker log");
        }
        assertEquals(0.0, KpipeJmx.kpipe(kpipe.node(), "plugin-fault-total"), "kpipe plugin-fault-total");
    }

    // ------------------------------------------------------------------------------------------ tests

    @Test
    @Order(1)
    void producerByteRateByClientIdHoldsAPipelinedIdempotentProducerToTheQuota() throws Exception {
        rateTest(
                "producer_byte_rate, client-id=quota-client",
                "q-client-id",
                Map.of(ClientQuotaEntity.CLIENT_ID, "quota-client"),
                s -> QuotaLoad.producerProps(s.cluster().clientConfig(), "quota-client", BATCH_SIZE));
    }

    @Test
    @Order(2)
    void producerByteRateByUserHoldsAScramProducerToTheQuota() throws Exception {
        for (Side s : List.of(stock, kpipe)) {
            Scram.createUser(
                    s.cluster(),
                    "quota-user",
                    "quota-secret",
                    List.of(s.cluster().saslClientConfig("quota-user", "quota-secret")));
        }
        rateTest(
                "producer_byte_rate, user=quota-user (SASL_PLAINTEXT, SCRAM-SHA-512)",
                "q-user",
                Map.of(ClientQuotaEntity.USER, "quota-user"),
                s -> QuotaLoad.producerProps(
                        s.cluster().saslClientConfig("quota-user", "quota-secret"), "scram-producer", BATCH_SIZE));
    }

    /**
     * A client that ignores {@code throttle_time_ms} (no KIP-219 back-off) and keeps 8 requests
     * written ahead: only the broker muting the throttled connection holds it to the quota. Every 20th
     * request is an exclusive LIST_OFFSETS (kpipe drains, waits for the throttle windows, hands the
     * connection back to Kafka, upgrades again). Quota on the default client id.
     */
    @Test
    @Order(3)
    void defaultClientIdQuotaHoldsAClientThatIgnoresThrottleTime() throws Exception {
        Map<String, String> entity = Collections.singletonMap(ClientQuotaEntity.CLIENT_ID, null);
        withQuota(entity, "producer_byte_rate", QUOTA, () -> {
            for (int attempt = 1; ; attempt++) {
                String topic = "q-raw-" + attempt;
                createTopics(topic);
                Map<String, Double> before = kpipeCounters();
                Map<Side, Object[]> out = onBoth(s -> {
                    ThrottleIgnoringProducer.Result r = ThrottleIgnoringProducer.run(
                            s.node().port(), "raw-" + s.name(), topic, RUN, 8, 8, VALUE_SIZE, 20);
                    return new Object[] {r, QuotaLoad.consume(s.cluster(), topic, r.records(), VALUE_SIZE)};
                });
                Map<String, Double> after = kpipeCounters();
                ThrottleIgnoringProducer.Result rs = (ThrottleIgnoringProducer.Result) out.get(stock)[0];
                ThrottleIgnoringProducer.Result rk = (ThrottleIgnoringProducer.Result) out.get(kpipe)[0];
                Map<Side, Timeline> timelines = timelines(out, 1);
                report(
                        "producer_byte_rate, client-id=<default>, client ignoring throttle_time_ms, attempt " + attempt,
                        timelines,
                        List.of(
                                row("records acknowledged", rs.records(), rk.records()),
                                row("exclusive list-offsets answered", rs.listOffsets(), rk.listOffsets()),
                                row("throttled responses (ignored)", rs.throttledResponses(), rk.throttledResponses()),
                                row("max throttle_time_ms", rs.maxThrottleMs(), rk.maxThrottleMs())),
                        before,
                        after,
                        true);
                if (controlMissed(timelines, attempt)) {
                    continue;
                }
                for (ThrottleIgnoringProducer.Result r : List.of(rs, rk)) {
                    assertTrue(r.throttledResponses() > 0, "the broker throttled the client");
                    assertTrue(r.listOffsets() > 0, "exclusive requests were interleaved");
                }
                assertRatesMatch(timelines);
                assertGrew(
                        before,
                        after,
                        "throttle-window-total",
                        "throttle-time-ms-total",
                        "upgrade-total",
                        "downgrade-total");
                return;
            }
        });
    }

    /** request_percentage=1 for a client id: the pipelined producer is throttled, nothing is lost. */
    @Test
    @Order(4)
    void requestPercentageThrottlesAPipelinedProducer() throws Exception {
        String clientId = "request-quota-client";
        String topic = "q-request";
        createTopics(topic);
        withQuota(Map.of(ClientQuotaEntity.CLIENT_ID, clientId), "request_percentage", 1.0, () -> {
            Map<String, Double> before = kpipeCounters();
            Map<Side, Object[]> out = onBoth(s -> {
                Map<String, Object> props = QuotaLoad.producerProps(s.cluster().clientConfig(), clientId, 16384);
                props.put("linger.ms", 0);
                // Many small requests: the request quota counts broker thread time per request.
                Produced p = QuotaLoad.produce(props, topic, Duration.ofSeconds(6), 2 * QuotaLoad.MIB, 200);
                double brokerThrottle = requestThrottleTime(s.node(), clientId);
                return new Object[] {p, QuotaLoad.consume(s.cluster(), topic, p.sent(), 200), brokerThrottle};
            });
            Map<String, Double> after = kpipeCounters();
            Produced ps = (Produced) out.get(stock)[0];
            Produced pk = (Produced) out.get(kpipe)[0];
            double bs = (Double) out.get(stock)[2];
            double bk = (Double) out.get(kpipe)[2];
            report(
                    "request_percentage=1, client-id=" + clientId + " (6 s, 200-byte records, linger 0)",
                    timelines(out, 1),
                    List.of(
                            row("records (all read back in order)", ps.sent(), pk.sent()),
                            row("produce-throttle-time-max ms", ps.throttleMaxMs(), pk.throttleMaxMs()),
                            row("broker Request throttle-time ms", bs, bk)),
                    before,
                    after,
                    false);
            for (Produced p : List.of(ps, pk)) {
                assertTrue(p.throttleMaxMs() > 0, "produce-throttle-time-max > 0");
            }
            assertTrue(bs > 0 && bk > 0, "broker kafka.server:type=Request throttle-time > 0 on both");
            assertGrew(before, after, "pipelined-request-total", "throttle-window-total");
        });
    }

    // --------------------------------------------------------------------------------------- helpers

    private interface PropsFor {
        Map<String, Object> props(Side side);
    }

    private interface SideTask {
        Object[] run(Side side) throws Exception;
    }

    private interface Body {
        void run() throws Exception;
    }

    /**
     * producer_byte_rate = 1 MiB/s on the entity; an idempotent producer tries 10 MiB/s on both brokers
     * at once; the quota-window-averaged append rate is within ±10% of the quota on both, every record
     * arrives once and in order, the producer saw throttle times, kpipe pipelined and throttled the
     * connection.
     */
    private void rateTest(String title, String topicPrefix, Map<String, String> entity, PropsFor propsFor)
            throws Exception {
        withQuota(entity, "producer_byte_rate", QUOTA, () -> {
            for (int attempt = 1; ; attempt++) {
                String topic = topicPrefix + "-" + attempt;
                createTopics(topic);
                Map<String, Double> before = kpipeCounters();
                Map<Side, Object[]> out = onBoth(s -> {
                    Produced p = QuotaLoad.produce(propsFor.props(s), topic, RUN, 10 * QUOTA, VALUE_SIZE);
                    return new Object[] {p, QuotaLoad.consume(s.cluster(), topic, p.sent(), VALUE_SIZE)};
                });
                Map<String, Double> after = kpipeCounters();
                Produced ps = (Produced) out.get(stock)[0];
                Produced pk = (Produced) out.get(kpipe)[0];
                Map<Side, Timeline> timelines = timelines(out, 1);
                report(
                        title + ", producer trying 10 MiB/s, attempt " + attempt,
                        timelines,
                        List.of(
                                row("records (all read back in order)", ps.sent(), pk.sent()),
                                row("produce-throttle-time-avg ms", ps.throttleAvgMs(), pk.throttleAvgMs()),
                                row("produce-throttle-time-max ms", ps.throttleMaxMs(), pk.throttleMaxMs())),
                        before,
                        after,
                        true);
                if (controlMissed(timelines, attempt)) {
                    continue;
                }
                for (Produced p : List.of(ps, pk)) {
                    assertTrue(p.throttleMaxMs() > 0, "produce-throttle-time-max > 0");
                }
                assertRatesMatch(timelines);
                assertGrew(before, after, "pipelined-request-total", "throttle-window-total", "throttle-time-ms-total");
                return;
            }
        });
    }

    private void withQuota(Map<String, String> entity, String key, double value, Body body) throws Exception {
        for (Side s : List.of(stock, kpipe)) {
            QuotaLoad.quota(s.cluster(), entity, key, value);
        }
        try {
            body.run();
        } finally {
            for (Side s : List.of(stock, kpipe)) {
                QuotaLoad.quota(s.cluster(), entity, key, null);
            }
        }
    }

    private void createTopics(String topic) {
        for (Side s : List.of(stock, kpipe)) {
            QuotaLoad.createTopic(s.cluster(), topic);
        }
    }

    /** Runs the task on the stock and the kpipe side at the same time. */
    private Map<Side, Object[]> onBoth(SideTask task) throws Exception {
        Map<Side, Future<Object[]>> futures = new LinkedHashMap<>();
        for (Side s : List.of(stock, kpipe)) {
            futures.put(s, pool.submit(() -> task.run(s)));
        }
        Map<Side, Object[]> out = new LinkedHashMap<>();
        for (Map.Entry<Side, Future<Object[]>> e : futures.entrySet()) {
            out.put(e.getKey(), e.getValue().get());
        }
        return out;
    }

    private static Map<Side, Timeline> timelines(Map<Side, Object[]> out, int index) {
        Map<Side, Timeline> m = new LinkedHashMap<>();
        out.forEach((s, o) -> m.put(s, (Timeline) o[index]));
        return m;
    }

    /** @return true if the stock control missed the quota on a first attempt (measure again) */
    private boolean controlMissed(Map<Side, Timeline> timelines, int attempt) {
        double r = averagedRate(timelines.get(stock)) / QUOTA;
        if (Math.abs(r - 1) > TOLERANCE && attempt < 2) {
            System.out.printf(
                    "[quota] the stock control achieved %.3f x quota: the machine could not drive the"
                            + " load; measuring again%n",
                    r);
            return true;
        }
        return false;
    }

    /** The quota-window-averaged rates of both brokers within ±10% of the quota, and of each other. */
    private void assertRatesMatch(Map<Side, Timeline> timelines) {
        for (Side s : List.of(stock, kpipe)) {
            assertTrue(
                    timelines.get(s).spanS() >= WARMUP_S + PERIOD_S + LENGTH_S,
                    s.name() + ": appends span only " + timelines.get(s).spanS() + " s");
        }
        double rs = averagedRate(timelines.get(stock));
        double rk = averagedRate(timelines.get(kpipe));
        assertTrue(Math.abs(rs / QUOTA - 1) <= TOLERANCE, "stock rate " + rs / QUOTA + " x quota");
        assertTrue(Math.abs(rk / QUOTA - 1) <= TOLERANCE, "kpipe rate " + rk / QUOTA + " x quota");
        assertTrue(Math.abs(rk / rs - 1) <= TOLERANCE, "kpipe/stock " + rk / rs);
    }

    private static double averagedRate(Timeline t) {
        return t.windowAveragedRate(WARMUP_S, PERIOD_S, LENGTH_S);
    }

    private static void assertGrew(Map<String, Double> before, Map<String, Double> after, String... metrics) {
        for (String m : metrics) {
            assertTrue(after.get(m) > before.get(m), "kpipe " + m + " grew: " + before.get(m) + " -> " + after.get(m));
        }
    }

    private static final List<String> COUNTERS = List.of(
            "pipelined-request-total",
            "throttle-window-total",
            "throttle-time-ms-total",
            "upgrade-total",
            "downgrade-total");

    private Map<String, Double> kpipeCounters() throws Exception {
        Map<String, Double> m = new HashMap<>();
        for (String name : COUNTERS) {
            m.put(name, KpipeJmx.kpipe(kpipe.node(), name));
        }
        return m;
    }

    /** The broker's own request-quota throttle metric of the client, {@code kafka.server:type=Request,...}. */
    private static double requestThrottleTime(KafkaNode node, String clientId) throws Exception {
        // JmxReporter leaves out empty tags: user="" for a client-id quota.
        for (ObjectName name : node.jmx().queryNames(new ObjectName("kafka.server:type=Request,*"), null)) {
            if (clientId.equals(name.getKeyProperty("client-id"))) {
                Object v = node.jmx().getAttribute(name, "throttle-time");
                return v instanceof Number n && !Double.isNaN(n.doubleValue()) ? n.doubleValue() : 0;
            }
        }
        return -1;
    }

    private static String row(String label, Object stockValue, Object kpipeValue) {
        return String.format("  %-34s %16s %16s", label, fmt(stockValue), fmt(kpipeValue));
    }

    private static String fmt(Object v) {
        return v instanceof Double d ? String.format("%.1f", d) : String.valueOf(v);
    }

    private void report(
            String title,
            Map<Side, Timeline> timelines,
            List<String> rows,
            Map<String, Double> before,
            Map<String, Double> after,
            boolean byteQuota) {
        Timeline ts = timelines.get(stock);
        Timeline tk = timelines.get(kpipe);
        StringBuilder sb = new StringBuilder("\n[quota] ").append(title).append('\n');
        sb.append(String.format("  %-34s %16s %16s%n", "", "stock", "kpipe"));
        if (byteQuota) {
            double rs = averagedRate(ts);
            double rk = averagedRate(tk);
            sb.append(row("rate, quota-window avg (KiB/s)", rs / 1024, rk / 1024))
                    .append('\n');
            sb.append(row("  / quota", String.format("%.3f", rs / QUOTA), String.format("%.3f", rk / QUOTA)))
                    .append('\n');
            int to = WARMUP_S + PERIOD_S + LENGTH_S;
            sb.append(row(
                            "plain rate s" + WARMUP_S + "-" + to + " / quota",
                            String.format("%.3f", ts.rate(WARMUP_S, to) / QUOTA),
                            String.format("%.3f", tk.rate(WARMUP_S, to) / QUOTA)))
                    .append('\n');
        } else {
            sb.append(row("rate s1-6 (KiB/s)", ts.rate(1, 6) / 1024, tk.rate(1, 6) / 1024))
                    .append('\n');
        }
        for (String r : rows) {
            sb.append(r).append('\n');
        }
        sb.append("  kpipe metrics (delta):");
        for (String k : COUNTERS) {
            sb.append(' ').append(k).append('=').append(String.format("%.0f", after.get(k) - before.get(k)));
        }
        sb.append("\n  per-second KiB stock: ").append(ts.series());
        sb.append("\n  per-second KiB kpipe: ").append(tk.series());
        System.out.println(sb);
    }
}
