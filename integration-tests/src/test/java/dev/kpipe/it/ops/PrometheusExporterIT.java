// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.TestLog;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.harness.Ports;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import javax.management.MBeanAttributeInfo;
import javax.management.ObjectName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

/**
 * The Prometheus JMX exporter (the real agent from Maven Central, {@code kpipe.it.jmx.exporter.jar}) attached to a
 * kpipe broker with kpipe's config ({@code monitoring/prometheus/kpipe-jmx-exporter.yml}), scraped on 127.0.0.1 while
 * and after the test drives pipelined traffic: every documented series is there with its type and a value that matches
 * the traffic, and nothing of the broker's own beans is exported by that config. A second test, on a scrape of its
 * own, checks the Grafana dashboard's queries against the served series.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PrometheusExporterIT {

    private static final String TOPIC = "prometheus-produce";
    /** Produces written back to back on one raw connection (the first upgrades it). */
    private static final int PRODUCES = 12;

    private static final long BUDGET = 4 * 1024 * 1024;
    private static final Duration WINDOW = Duration.ofSeconds(30);

    private Cluster cluster;
    private String metricsUrl;

    @BeforeAll
    void start() throws IOException {
        Path agent = Path.of(System.getProperty("kpipe.it.jmx.exporter.jar", "missing"));
        assertTrue(Files.isRegularFile(agent), "the exporter agent " + agent + " (the build copies it)");
        Path config = KpipeDashboard.monitoringDir().resolve("prometheus/kpipe-jmx-exporter.yml");
        assertTrue(Files.isRegularFile(config), config.toString());
        int port = Ports.freeLoopbackPort();
        metricsUrl = "http://127.0.0.1:" + port + "/metrics";
        cluster = Cluster.start(ClusterSpec.builder()
                .name("PrometheusExporterIT")
                .brokerConfig("kpipe.max.inflight.bytes", Long.toString(BUDGET))
                .kafkaOpts("-javaagent:" + agent + "=127.0.0.1:" + port + ":" + config.toAbsolutePath())
                .build());
        cluster.createTopic(TOPIC, 1, 1);
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * One raw connection writes {@value #PRODUCES} acks=1 produces back to back: the scrape while it is open shows 1
     * pipelined connection, 1 upgrade and exactly {@value #PRODUCES} pipelined requests more than before; after it
     * closes, every gauge of the connection is back to 0 and the counters kept their values. Every documented series
     * is in both scrapes with its documented type; every attribute of kpipe's MBean has its series; the kpipe config
     * exports no other {@code kafka_*} series.
     */
    @Test
    void everyDocumentedSeriesIsExportedWithValuesThatMatchTheTraffic() throws Exception {
        KafkaNode node = cluster.node(1);
        PrometheusScrape before = awaitKpipeSeries();
        assertEveryDocumentedSeries(before);
        assertEquals(0.0, before.get(PrometheusSeries.name("pipelined-connections")));
        assertEquals(
                (double) BUDGET,
                before.get(PrometheusSeries.name("inflight-bytes-limit")),
                "inflight-bytes-limit is kpipe.max.inflight.bytes");

        PrometheusScrape open;
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), "prometheus-raw", Duration.ofSeconds(30))) {
            for (int i = 0; i < PRODUCES; i++) {
                conn.send(100 + i, Wire.produce(TOPIC, 0, (short) 1, Wire.bytes("p" + i)));
            }
            for (int i = 0; i < PRODUCES; i++) {
                Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 100 + i);
            }
            open = await(
                    "the connection pipelined and idle",
                    s -> s.get(PrometheusSeries.name("pipelined-request-total"))
                                            - before.get(PrometheusSeries.name("pipelined-request-total"))
                                    == PRODUCES
                            && s.get(PrometheusSeries.name("inflight-requests")) == 0);
        }
        PrometheusScrape idle = await(
                "every gauge back to 0",
                s -> s.get(PrometheusSeries.name("pipelined-connections")) == 0
                        && s.get(PrometheusSeries.name("connections-tracked")) == 0);
        assertEveryDocumentedSeries(open);
        assertEveryDocumentedSeries(idle);
        // The whole scrape (about 120 lines) goes to this class's log file (dev.kpipe.it.TestLog), one line to the
        // console
        LoggerFactory.getLogger(PrometheusExporterIT.class)
                .info("kpipe's series with the connection open:\n{}", kpipeLines(open));
        System.out.println("PrometheusExporterIT: every documented series served, with the connection open and idle"
                + " (the scrape: " + TestLog.file(PrometheusExporterIT.class.getSimpleName()) + ")");

        assertEquals(1.0, open.get(PrometheusSeries.name("pipelined-connections")), "one pipelined connection");
        assertEquals(1.0, open.get(PrometheusSeries.name("connections-tracked")));
        assertEquals(1.0, delta(open, before, "upgrade-total"), "the first produce upgraded the connection");
        assertEquals(PRODUCES, delta(open, before, "pipelined-request-total"), "every produce admitted pipelined");
        assertTrue(open.get(PrometheusSeries.name("inflight-requests-per-connection-max")) >= 1);
        assertTrue(open.get(PrometheusSeries.name("inflight-bytes-max")) > 0, "the produces used the budget");
        assertEquals(0.0, open.get(PrometheusSeries.name("plugin-fault-total")));
        assertEquals(0.0, open.get(PrometheusSeries.name("classification-fallback-total")));

        for (String gauge : KpipeMetricsSnapshot.IDLE_GAUGES) {
            assertEquals(0.0, idle.get(PrometheusSeries.name(gauge)), gauge + " after the connection closed");
        }
        assertEquals(0.0, idle.get(PrometheusSeries.name("connections-tracked")), "the connection table is empty");
        assertEquals(PRODUCES, delta(idle, before, "pipelined-request-total"), "counters keep their values");
        assertEquals(1.0, delta(idle, before, "upgrade-total"));

        // The scrape matches JMX: the counters the exporter serves are kpipe's own values.
        assertEquals(
                KpipeJmx.kpipe(node, "pipelined-request-total"),
                idle.get(PrometheusSeries.name("pipelined-request-total")));

        // Every attribute of kpipe's MBean has its series (a new metric cannot be left out of the config and docs).
        Set<String> attributes = new TreeSet<>();
        for (MBeanAttributeInfo a :
                node.jmx().getMBeanInfo(new ObjectName(KpipeJmx.KPIPE_MBEAN)).getAttributes()) {
            attributes.add(a.getName());
        }
        assertEquals(MetricsJmxIT.METRICS, attributes, "kpipe's MBean has exactly the documented metrics");

        Set<String> foreign = idle.values().keySet().stream()
                .filter(n -> n.startsWith("kafka_") && !n.startsWith(PrometheusSeries.PREFIX))
                .collect(Collectors.toSet());
        assertEquals(Set.of(), foreign, "the kpipe config exports none of the broker's own beans");
        assertTrue(
                idle.values().keySet().stream().noneMatch(n -> n.contains("kpipe_connections")),
                "the connection dump is text, not a series");
    }

    /**
     * The dashboard's queries use only series the exporter serves: checked against a scrape of its own (kpipe's series
     * are exported from the start, before any traffic), so it does not depend on the other test.
     */
    @Test
    void theDashboardQueriesOnlyScrapedSeries() throws Exception {
        PrometheusScrape scrape = awaitKpipeSeries();
        Set<String> used = KpipeDashboard.load().metricNames();
        assertTrue(used.size() >= 20, "the dashboard uses " + used);
        for (String name : used) {
            assertTrue(scrape.values().containsKey(name), name + " (used by the dashboard) was not scraped");
        }
    }

    private static double delta(PrometheusScrape now, PrometheusScrape before, String metric) {
        return now.get(PrometheusSeries.name(metric)) - before.get(PrometheusSeries.name(metric));
    }

    /**
     * Asserts the scrape has exactly the documented kpipe series (none missing, none extra or misnamed), each with its
     * documented type.
     */
    private static void assertEveryDocumentedSeries(PrometheusScrape s) {
        Set<String> scraped = s.values().keySet().stream()
                .filter(n -> n.startsWith(PrometheusSeries.PREFIX))
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(PrometheusSeries.all().keySet(), scraped, "the kpipe series scraped:\n" + kpipeLines(s));
        for (Map.Entry<String, String> e : PrometheusSeries.all().entrySet()) {
            assertTrue(s.values().containsKey(e.getKey()), e.getKey() + " not exported:\n" + kpipeLines(s));
            assertEquals(PrometheusSeries.type(e.getValue()), s.typeOf(e.getKey()), "type of " + e.getKey());
        }
    }

    private static String kpipeLines(PrometheusScrape s) {
        return s.text().lines().filter(l -> l.contains("kpipe")).collect(Collectors.joining("\n"));
    }

    /** @return the first scrape that has kpipe's series (the agent serves them once the broker registered them) */
    private PrometheusScrape awaitKpipeSeries() throws Exception {
        return await(
                "the exporter serving kpipe's series",
                s -> s.values().containsKey(PrometheusSeries.name("upgrade-total")));
    }

    /** Scrapes every 100 ms until the condition holds. */
    private PrometheusScrape await(String what, Predicate<PrometheusScrape> condition) throws Exception {
        long deadline = System.nanoTime() + WINDOW.toNanos();
        PrometheusScrape last = null;
        Exception failure = null;
        do {
            try {
                last = PrometheusScrape.scrape(metricsUrl);
                failure = null;
                if (condition.test(last)) {
                    return last;
                }
            } catch (IOException | AssertionError e) {
                failure = e instanceof IOException io ? io : new IOException(e);
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("not within " + WINDOW + ": " + what
                + (failure != null ? "; last error " + failure : "; last scrape:\n" + kpipeLines(last)));
    }
}
