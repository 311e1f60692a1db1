// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Time;

/**
 * Where {@link TimingMetrics} makes and names its sensors: the listener's own Kafka {@link Metrics} ({@link #own}), or
 * the broker's plugin metrics of KIP-877 ({@link MonitoredRequestTiming}). Thread-safety: every method, any thread.
 */
interface TimingRegistry extends AutoCloseable {

    /**
     * @param name the metric's name
     * @param description its description
     * @param tags its own tags (the registry may add its own before them)
     * @return the metric's full name
     */
    MetricName name(String name, String description, Map<String, String> tags);

    /**
     * @param name the sensor's name
     * @return the sensor of that name, made at the first call and the same one after (idempotent, as {@link
     *     Metrics#sensor(String)})
     */
    Sensor sensor(String name);

    /**
     * @param name a metric's full name
     * @return the metric, or {@code null} if it does not exist or this registry cannot look it up
     */
    KafkaMetric find(MetricName name);

    /** Removes every sensor and metric made through this registry. */
    @Override
    void close();

    /**
     * @param broker the tag {@code broker} of every metric
     * @param reporters the reporters ({@code JmxReporter} in a broker; none in unit tests)
     * @param time the clock the sensors' windows follow
     * @return a registry of its own {@link Metrics}, JMX domain {@value TimingMetrics#DOMAIN}, group {@value
     *     TimingMetrics#GROUP}
     */
    static TimingRegistry own(String broker, List<MetricsReporter> reporters, Time time) {
        MetricConfig config = new MetricConfig().tags(Map.of("broker", broker));
        Metrics metrics = new Metrics(config, reporters, time, new KafkaMetricsContext(TimingMetrics.DOMAIN));
        return new TimingRegistry() {
            @Override
            public MetricName name(String name, String description, Map<String, String> tags) {
                return metrics.metricName(name, TimingMetrics.GROUP, description, tags);
            }

            @Override
            public Sensor sensor(String name) {
                return metrics.sensor(name);
            }

            @Override
            public KafkaMetric find(MetricName name) {
                return metrics.metric(name);
            }

            @Override
            public void close() {
                metrics.close();
            }
        };
    }
}
