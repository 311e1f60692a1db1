// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.testkit.FakeProcessor;
import dev.kpipe.spi.testkit.FakeRequest;
import dev.kpipe.spi.testkit.FakeResponse;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The KIP-877 variant wrapped as kpipe's reference patch wraps a broker's listener: {@code Plugin.wrapInstance(listener,
 * metrics, "network.event.listener.class")} over a {@link Metrics} in the broker's JMX domain {@code kafka.server},
 * after {@code configure}; then {@code Plugin.close}, as the broker's shutdown.
 */
class MonitoredRequestTimingTest {

    private static final String CONFIG = "network.event.listener.class";
    private static final String PREFIX =
            "kafka.server:type=plugins,config=" + CONFIG + ",class=" + MonitoredRequestTiming.class.getSimpleName();

    private final FakeTime time = new FakeTime();
    private final Metrics broker = new Metrics(
            new MetricConfig(), List.of(new JmxReporter()), time, new KafkaMetricsContext("kafka.server"));
    private final MonitoredRequestTiming<FakeRequest, FakeResponse> timing = new MonitoredRequestTiming<>(time);

    @AfterEach
    void close() {
        broker.close();
    }

    private Plugin<MonitoredRequestTiming<FakeRequest, FakeResponse>> wrapped() {
        timing.configure(Map.of("node.id", "1"));
        return Plugin.wrapInstance(timing, broker, CONFIG);
    }

    /** @return the value of a metric in the broker's registry, by its name and its own tags */
    private double value(String name, ApiKeys api) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("config", CONFIG);
        tags.put("class", MonitoredRequestTiming.class.getSimpleName());
        if (api != null) {
            tags.put("request", api.name);
        }
        KafkaMetric m = broker.metric(new MetricName(name, "plugins", "", tags));
        return m == null ? Double.NaN : ((Number) m.metricValue()).doubleValue();
    }

    private Set<String> pluginMetrics() {
        Set<String> names = new TreeSet<>();
        for (MetricName n : broker.metrics().keySet()) {
            if (n.group().equals("plugins")) {
                names.add(n.name() + n.tags());
            }
        }
        return names;
    }

    @Test
    void registersThePerApiTimingsAsTheBrokersPluginMetrics() throws Exception {
        Plugin<MonitoredRequestTiming<FakeRequest, FakeResponse>> plugin = wrapped();
        FakeProcessor p = new FakeProcessor(plugin.get());
        FakeRequest produce = p.read("c1", ApiKeys.PRODUCE);
        time.advanceMs(3);
        p.dispatch(produce);
        time.advanceMs(7);
        p.respond(produce);
        p.round();

        assertEquals(3.0, value("read-to-dispatch-time-ms-avg", ApiKeys.PRODUCE));
        assertEquals(7.0, value("dispatch-to-write-time-ms-max", ApiKeys.PRODUCE));
        assertEquals(1.0, value("request-total", ApiKeys.PRODUCE));
        assertEquals(0.0, value("untracked-total", null));
        assertEquals(0.0, value("written-before-dispatch-total", null));
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ObjectName perApi = new ObjectName(PREFIX + ",request=Produce");
        assertEquals(1.0, ((Number) jmx.getAttribute(perApi, "request-total")).doubleValue());
        assertEquals(3.0, ((Number) jmx.getAttribute(perApi, "read-to-dispatch-time-ms-avg")).doubleValue());
        assertEquals(0.0, ((Number) jmx.getAttribute(new ObjectName(PREFIX), "abandoned-total")).doubleValue());
        assertTrue(
                jmx.queryNames(new ObjectName("dev.kpipe.examples:*"), null).stream()
                        .noneMatch(n -> n.toString().contains("broker=1")),
                "no metrics of its own beside the broker's");
        p.verify();
        plugin.close();
    }

    @Test
    void closingThePluginRemovesEveryMetricAndMBean() throws Exception {
        Plugin<MonitoredRequestTiming<FakeRequest, FakeResponse>> plugin = wrapped();
        FakeProcessor p = new FakeProcessor(plugin.get());
        for (ApiKeys api : List.of(ApiKeys.PRODUCE, ApiKeys.FETCH)) {
            FakeRequest r = p.read("c1", api);
            p.dispatch(r);
            p.respond(r);
            p.round();
        }
        assertEquals(
                Set.of(
                        "abandoned-total{config=" + CONFIG + ", class=MonitoredRequestTiming}",
                        "untracked-total{config=" + CONFIG + ", class=MonitoredRequestTiming}",
                        "written-before-dispatch-total{config=" + CONFIG + ", class=MonitoredRequestTiming}"),
                Set.copyOf(pluginMetrics().stream()
                        .filter(n -> !n.contains("request="))
                        .toList()));
        assertEquals(13, pluginMetrics().size(), "3 without the request tag, 5 per API (avg, max of each time; count)");
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        assertTrue(jmx.isRegistered(new ObjectName(PREFIX + ",request=Fetch")));

        plugin.close();

        assertEquals(Set.of(), pluginMetrics(), "every plugin metric removed");
        assertFalse(jmx.isRegistered(new ObjectName(PREFIX + ",request=Fetch")));
        assertFalse(jmx.isRegistered(new ObjectName(PREFIX + ",request=Produce")));
        assertFalse(jmx.isRegistered(new ObjectName(PREFIX)));
    }

    @Test
    void theClassesRequestTimingLoadsNameNoTypeOfKip877() throws Exception {
        for (String c : List.of(
                "RequestTiming", "TimingMetrics", "TimingRegistry", "TimingRegistry$1", "InFlightTable",
                "InFlightTable$Step")) {
            try (InputStream in = RequestTiming.class.getResourceAsStream(c + ".class")) {
                String bytes = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
                assertFalse(bytes.contains("Monitorable"), c + " loads on Kafka 3.8 to 4.0");
                assertFalse(bytes.contains("PluginMetrics"), c + " loads on Kafka 3.8 to 4.0");
            }
        }
    }

    @Test
    void timesNothingUntilTheBrokerHandsItsPluginMetrics() throws Exception {
        timing.configure(Map.of("node.id", "1"));
        FakeProcessor p = new FakeProcessor(timing);
        FakeRequest r = p.read("c1", ApiKeys.PRODUCE);
        p.dispatch(r);
        p.respond(r);
        p.round();
        assertNull(timing.metrics(), "no metrics before withPluginMetrics");
        assertEquals(Set.of(), pluginMetrics());
        p.verify();
        timing.close();
    }
}
