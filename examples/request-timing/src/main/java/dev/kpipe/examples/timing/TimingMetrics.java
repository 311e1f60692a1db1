// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Avg;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Max;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;

/**
 * The timing listener's metrics, in Kafka's own {@link Metrics} registry (sampled windows: Kafka's default two of
 * 30 s), reported to JMX by Kafka's {@code JmxReporter} under the domain {@value #DOMAIN}, the way a client's or the
 * broker's {@code kafka.network} selector metrics are. Per API, tag {@code request} (Kafka's name, e.g. {@code
 * Produce}, as the broker's {@code RequestMetrics}), group {@value #GROUP}:
 *
 * <ul>
 *   <li>{@code read-to-dispatch-time-ms-avg}, {@code -max}: from the request read to its order-defining step
 *       ({@code onRequestDispatched}), ms;
 *   <li>{@code dispatch-to-write-time-ms-avg}, {@code -max}: from that step to its response written, ms (0 when the
 *       response was written before the request handler returned);
 *   <li>{@code request-total}: requests timed.
 * </ul>
 *
 * And without the {@code request} tag: {@code untracked-total} (events of requests not timed: no free slot near the
 * request's identity hash, or it was read before the listener was installed), {@code abandoned-total} (requests never
 * completed whose slot a new request took), {@code written-before-dispatch-total}. Every metric carries the tag {@code
 * broker} (the broker's {@code node.id}), so brokers sharing a JVM do not share names. A sensor per API is made at its
 * first request. Thread-safety: every method, any thread (Kafka's sensors synchronize per sensor).
 *
 * <p>The same metrics can be registered elsewhere ({@link TimingRegistry}): {@link MonitoredRequestTiming} registers
 * them through the broker's plugin metrics (KIP-877), without the {@code broker} tag.
 */
final class TimingMetrics implements AutoCloseable {

    /** The JMX domain of the metrics. */
    static final String DOMAIN = "dev.kpipe.examples";
    /** The metrics' group, the {@code type} of their MBeans. */
    static final String GROUP = "request-timing-metrics";

    private static final double NANOS_PER_MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final TimingRegistry metrics;
    private final AtomicReferenceArray<Sensor> readToDispatch;
    private final AtomicReferenceArray<Sensor> dispatchToWrite;
    private final Sensor untracked;
    private final Sensor abandoned;
    private final Sensor writtenFirst;

    /**
     * @param broker the broker's node id, the tag {@code broker}
     * @param reporters the reporters ({@code JmxReporter} in a broker; none in unit tests)
     * @param time the clock the sensors' windows follow
     */
    TimingMetrics(String broker, List<MetricsReporter> reporters, Time time) {
        this(TimingRegistry.own(broker, reporters, time));
    }

    /** @param registry where the sensors are made and named; closed by {@link #close} */
    TimingMetrics(TimingRegistry registry) {
        this.metrics = registry;
        int size = 0;
        for (ApiKeys api : ApiKeys.values()) {
            size = Math.max(size, api.id + 1);
        }
        this.readToDispatch = new AtomicReferenceArray<>(size);
        this.dispatchToWrite = new AtomicReferenceArray<>(size);
        this.untracked =
                counter("untracked-total", "events of requests not timed: no free slot near its hash, or read before");
        this.abandoned = counter("abandoned-total", "requests never completed whose slot a new request took");
        this.writtenFirst =
                counter("written-before-dispatch-total", "responses written before their request handler returned");
    }

    /** Records a request's read-to-dispatch time. */
    void readToDispatch(ApiKeys api, long nanos, long nowMs) {
        sensor(readToDispatch, api, "read-to-dispatch-time-ms").record(nanos / NANOS_PER_MS, nowMs, false);
    }

    /** Records a request's dispatch-to-write time, and counts it. */
    void dispatchToWrite(ApiKeys api, long nanos, long nowMs) {
        sensor(dispatchToWrite, api, "dispatch-to-write-time-ms").record(nanos / NANOS_PER_MS, nowMs, false);
    }

    void untracked(long nowMs) {
        untracked.record(1, nowMs, false);
    }

    void abandoned(long nowMs) {
        abandoned.record(1, nowMs, false);
    }

    void writtenFirst(long nowMs) {
        writtenFirst.record(1, nowMs, false);
    }

    /**
     * @param name the metric's name
     * @param api its {@code request} tag, or {@code null} for a metric without it
     * @return its value, or {@code NaN} if it does not exist (yet)
     */
    double value(String name, ApiKeys api) {
        Map<String, String> tags = new LinkedHashMap<>();
        if (api != null) {
            tags.put("request", api.name);
        }
        KafkaMetric m = metrics.find(metrics.name(name, "", tags));
        return m == null ? Double.NaN : ((Number) m.metricValue()).doubleValue();
    }

    private Sensor sensor(AtomicReferenceArray<Sensor> sensors, ApiKeys api, String prefix) {
        Sensor s = sensors.get(api.id);
        if (s != null) {
            return s;
        }
        // once per API: Metrics.sensor is synchronized and returns the same sensor for the same name
        Map<String, String> tags = Map.of("request", api.name);
        s = metrics.sensor(prefix + ":" + api.name);
        s.add(metrics.name(prefix + "-avg", "average over the sampled window, ms", tags), new Avg());
        s.add(metrics.name(prefix + "-max", "maximum over the sampled window, ms", tags), new Max());
        if (sensors == dispatchToWrite) {
            s.add(metrics.name("request-total", "requests timed", tags), new CumulativeCount());
        }
        sensors.set(api.id, s);
        return s;
    }

    private Sensor counter(String name, String description) {
        Sensor s = metrics.sensor(name);
        s.add(metrics.name(name, description, Map.of()), new CumulativeSum());
        return s;
    }

    /** Removes every metric (and its MBean) this instance registered. */
    @Override
    public void close() {
        metrics.close();
    }
}
