// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.KafkaNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/** A {@link LoadRound}'s figures: producer metrics and broker JMX counters (caller's thread; NaN if absent). */
final class RoundMetrics {
    private RoundMetrics() {}

    /** Client-side averages at the end of the window (Kafka's windowed averages: the last ~30-60 s). */
    static Map<String, Double> clientMetrics(List<LoadSender> senders) {
        Map<String, Double> m = new LinkedHashMap<>();
        int n = senders.size();
        m.put(
                "producer_request_latency_avg_ms",
                sum(senders, p -> metric(p, "producer-node-metrics", "request-latency-avg", LoadRound.LEADER_NODE_TAG))
                        / n);
        m.put(
                "producer_records_per_request_avg",
                sum(senders, p -> metric(p, "producer-metrics", "records-per-request-avg", null)) / n);
        m.put(
                "producer_batch_size_avg_bytes",
                sum(senders, p -> metric(p, "producer-metrics", "batch-size-avg", null)) / n);
        m.put(
                "producer_record_queue_time_avg_ms",
                sum(senders, p -> metric(p, "producer-metrics", "record-queue-time-avg", null)) / n);
        return m;
    }

    /** @return the sum of a figure over the senders' producers (NaN if it is NaN for one) */
    static double sum(List<LoadSender> senders, ToDoubleFunction<KafkaProducer<?, ?>> figure) {
        double sum = 0;
        for (LoadSender s : senders) {
            sum += figure.applyAsDouble(s.producer);
        }
        return sum;
    }

    /** Like {@link #metric} for a counter: 0 while it does not exist (per-node counters appear on first connect). */
    static double counter(KafkaProducer<?, ?> producer, String group, String name, String nodeTag) {
        double v = metric(producer, group, name, nodeTag);
        return Double.isNaN(v) ? 0 : v;
    }

    /**
     * @param nodeTag the {@code node-id} tag (e.g. {@code node-1}), or null for a metric without one
     * @return the metric's value, or NaN if the producer has no such metric
     */
    static double metric(KafkaProducer<?, ?> producer, String group, String name, String nodeTag) {
        for (Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet()) {
            MetricName mn = e.getKey();
            if (mn.name().equals(name)
                    && mn.group().equals(group)
                    && (nodeTag == null || nodeTag.equals(mn.tags().get("node-id")))) {
                Object v = e.getValue().metricValue();
                return v instanceof Number n ? n.doubleValue() : Double.NaN;
            }
        }
        return Double.NaN;
    }

    /** @return the broker's count of Produce requests received (all versions), from its RequestMetrics, or NaN */
    static double brokerProduceRequests(KafkaNode node) {
        try {
            MBeanServerConnection jmx = node.jmx();
            Set<ObjectName> names = jmx.queryNames(
                    new ObjectName("kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,*"), null);
            double sum = 0;
            for (ObjectName n : names) {
                sum += ((Number) jmx.getAttribute(n, "Count")).doubleValue();
            }
            return sum;
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /**
     * @return the times the broker's network processors on the client listener (PLAINTEXT) returned from a selector
     *     poll since start: the sum of Kafka's own {@code select-total} ({@code socket-server-metrics}, one per
     *     processor); each is a processor round, woken by I/O, a wake-up or its 300 ms poll timeout. NaN if absent
     */
    static double brokerSelects(KafkaNode node) {
        try {
            MBeanServerConnection jmx = node.jmx();
            Set<ObjectName> names = jmx.queryNames(
                    new ObjectName("kafka.server:type=socket-server-metrics,listener=PLAINTEXT,networkProcessor=*"),
                    null);
            double sum = 0;
            for (ObjectName n : names) {
                sum += ((Number) jmx.getAttribute(n, "select-total")).doubleValue();
            }
            return names.isEmpty() ? Double.NaN : sum;
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** The leader's budget figures at the end of the window (S3): kpipe-metrics, as over JMX. */
    static Map<String, Double> budgetMetrics(KafkaNode node) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (String name : List.of(
                "inflight-bytes-max",
                "inflight-bytes-limit",
                "budget-wait-total",
                "budget-wait-time-ms-total",
                "upgrade-deferred-total",
                "budget-reservation-revoked-total",
                "budget-oversize-admitted-total",
                "pipelined-connections",
                "inflight-requests-per-connection-max",
                "plugin-fault-total")) {
            m.put("kpipe_" + name.replace('-', '_'), kpipeMetric(node, name));
        }
        return m;
    }

    /** @return the largest Produce request the broker read since start, in bytes (RequestMetrics RequestBytes Max) */
    static double brokerMaxProduceRequestBytes(KafkaNode node) {
        try {
            return ((Number) node.jmx()
                            .getAttribute(
                                    new ObjectName(
                                            "kafka.network:type=RequestMetrics,name=RequestBytes,request=Produce"),
                                    "Max"))
                    .doubleValue();
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** @return a kpipe metric of the node, or NaN if unavailable */
    static double kpipeMetric(KafkaNode node, String name) {
        try {
            return ((Number) node.jmx().getAttribute(new ObjectName("kafka.server:type=kpipe-metrics"), name))
                    .doubleValue();
        } catch (InstanceNotFoundException e) {
            return Double.NaN;
        } catch (Exception e) {
            return Double.NaN;
        }
    }
}
