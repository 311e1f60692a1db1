// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Time;

/**
 * {@link RequestTiming} with its metrics registered through the broker's own mechanism for plugin metrics, KIP-877's
 * {@link Monitorable} (Kafka 4.1 and later; on 3.8 to 4.0, where {@code Monitorable} does not exist, this class does
 * not load: use {@link RequestTiming}). A broker that creates its listener with {@code
 * Plugin.wrapInstance(listener, metrics, "network.event.listener.class")}, as kpipe's reference patch does, calls
 * {@link #withPluginMetrics} once, after {@code configure}; the metrics of {@link TimingMetrics}, without its {@code
 * broker} tag, are then the broker's, in its JMX domain:
 *
 * <pre>
 * kafka.server:type=plugins,config=network.event.listener.class,class=MonitoredRequestTiming,request=Produce
 * kafka.server:type=plugins,config=network.event.listener.class,class=MonitoredRequestTiming
 * </pre>
 *
 * (Kafka's {@code PluginMetricsImpl}: group {@code plugins}, tags {@code config} and {@code class} before the
 * metric's own). They are removed when the broker closes the plugin ({@link #close}, then Kafka's {@code
 * Plugin.close}). Until {@code withPluginMetrics} is called nothing is timed: a host that never calls it (kpipe's
 * {@code kpipe.spi.observer.classes}, an unpatched broker) should name {@link RequestTiming} instead.
 *
 * <p>Threads: {@code withPluginMetrics} on the broker's start-up thread; the rest as {@link RequestTiming}.
 *
 * @param <Q> the broker's request type
 * @param <S> the broker's response type
 */
public final class MonitoredRequestTiming<Q, S> extends RequestTiming<Q, S> implements Monitorable {

    private volatile PluginMetrics pluginMetrics;
    private volatile boolean configured;

    /** For the broker: Kafka's system clock. */
    public MonitoredRequestTiming() {
        this(Time.SYSTEM);
    }

    /** @param time the clock */
    MonitoredRequestTiming(Time time) {
        super(time, List.<MetricsReporter>of());
    }

    /**
     * @param metrics the broker's metrics for this plugin; a second call moves the metrics to the new instance
     * @throws NullPointerException if {@code metrics} is null
     */
    @Override
    public void withPluginMetrics(PluginMetrics metrics) {
        if (metrics == null) {
            throw new NullPointerException("metrics");
        }
        pluginMetrics = metrics;
        if (configured) {
            install(new TimingMetrics(new PluginRegistry(metrics)));
        }
    }

    @Override
    public void configure(Map<String, ?> configs) {
        configured = true;
        super.configure(configs);
    }

    @Override
    TimingMetrics newMetrics(String broker) {
        PluginMetrics pm = pluginMetrics;
        return pm == null ? null : new TimingMetrics(new PluginRegistry(pm));
    }

    /** The registry over KIP-877's {@link PluginMetrics}: sensors made once per name, removed at {@link #close}. */
    private static final class PluginRegistry implements TimingRegistry {

        private final PluginMetrics metrics;
        private final Map<String, Sensor> sensors = new ConcurrentHashMap<>();

        PluginRegistry(PluginMetrics metrics) {
            this.metrics = metrics;
        }

        @Override
        public MetricName name(String name, String description, Map<String, String> tags) {
            return metrics.metricName(name, description, new LinkedHashMap<>(tags));
        }

        @Override
        public Sensor sensor(String name) {
            // PluginMetrics.addSensor refuses a name it has made: once per name, even when two threads race
            return sensors.computeIfAbsent(name, metrics::addSensor);
        }

        @Override
        public KafkaMetric find(MetricName name) {
            return null; // PluginMetrics looks nothing up: read the broker's JMX
        }

        @Override
        public void close() {
            for (String name : sensors.keySet()) {
                metrics.removeSensor(name);
            }
            sensors.clear();
        }
    }
}
