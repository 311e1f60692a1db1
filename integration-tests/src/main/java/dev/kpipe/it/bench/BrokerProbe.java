// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.KafkaNode;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * Broker figures over JMX for finding where a round's time goes (S1L): Kafka's own counters and gauges on the leader
 * and kpipe's connection dump. Every read is best effort: NaN (or no entry) when the broker does not answer.
 * Stateless; called from the round's caller thread.
 */
final class BrokerProbe {
    /** The leader's Produce purgatory: produce requests waiting for acks ({@code DelayedOperationPurgatory}). */
    static final String PRODUCE_PURGATORY =
            "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=Produce";

    private BrokerProbe() {}

    /**
     * @param node the broker
     * @param pattern an MBean name or pattern of Kafka meters (Yammer {@code Count} attribute)
     * @return the sum of {@code Count} over the matching MBeans, or NaN if none answers
     */
    static double count(KafkaNode node, String pattern) {
        try {
            MBeanServerConnection jmx = node.jmx();
            double sum = 0;
            boolean any = false;
            for (ObjectName n : jmx.queryNames(new ObjectName(pattern), null)) {
                sum += ((Number) jmx.getAttribute(n, "Count")).doubleValue();
                any = true;
            }
            return any ? sum : Double.NaN;
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /**
     * @param node the leader
     * @param kpipe whether kpipe runs there (then its connection dump and in-flight gauges are taken too)
     * @return the leader's produce purgatory size, kpipe's in-flight bytes and its connection dump (one line per
     *     connection: state, in-flight requests and bytes, wait reasons), sampled once
     */
    static Map<String, Object> midWindow(KafkaNode node, boolean kpipe) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("leader_produce_purgatory_size_mid_window", gauge(node, PRODUCE_PURGATORY, "Value"));
        if (kpipe) {
            m.put("kpipe_inflight_bytes_mid_window", gauge(node, "kafka.server:type=kpipe-metrics", "inflight-bytes"));
            try {
                Object dump = node.jmx()
                        .getAttribute(new ObjectName("kafka.server:type=kpipe-connections"), "connection-dump");
                m.put("kpipe_connection_dump_mid_window", String.valueOf(dump));
            } catch (Exception e) {
                m.put("kpipe_connection_dump_mid_window", "unavailable: " + e);
            }
        }
        return m;
    }

    private static double gauge(KafkaNode node, String name, String attribute) {
        try {
            return ((Number) node.jmx().getAttribute(new ObjectName(name), attribute)).doubleValue();
        } catch (Exception e) {
            return Double.NaN;
        }
    }
}
