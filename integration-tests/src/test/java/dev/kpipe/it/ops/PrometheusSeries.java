// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import java.util.Map;
import java.util.TreeMap;

/**
 * The Prometheus series kpipe's exporter config ({@code monitoring/prometheus/kpipe-jmx-exporter.yml}) exports: one per
 * kpipe metric ({@link MetricsJmxIT#METRICS}), named {@value #PREFIX} + the metric with {@code -} as {@code _}, a
 * counter if the metric's name ends in {@code -total}, else a gauge. docs/monitoring.md lists the same.
 */
final class PrometheusSeries {
    /** What every kpipe series starts with: the JMX domain and type, as the exporter's default naming would give. */
    static final String PREFIX = "kafka_server_kpipe_metrics_";

    private PrometheusSeries() {}

    /**
     * @param metric a kpipe metric, e.g. {@code upgrade-total}
     * @return its Prometheus name, e.g. {@code kafka_server_kpipe_metrics_upgrade_total}
     */
    static String name(String metric) {
        return PREFIX + metric.replace('-', '_');
    }

    /** @return {@code counter} or {@code gauge} */
    static String type(String metric) {
        return metric.endsWith("-total") ? "counter" : "gauge";
    }

    /** @return every documented series: Prometheus name to kpipe metric, sorted by name */
    static Map<String, String> all() {
        Map<String, String> out = new TreeMap<>();
        for (String m : MetricsJmxIT.METRICS) {
            out.put(name(m), m);
        }
        return out;
    }
}
