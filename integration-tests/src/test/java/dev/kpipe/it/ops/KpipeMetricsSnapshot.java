// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * Every attribute of kpipe's MBean ({@value KpipeJmx#KPIPE_MBEAN}) read from a running broker over JMX in one call.
 * Immutable.
 */
record KpipeMetricsSnapshot(Map<String, Double> values) {

    /**
     * @param metric a kpipe metric name, e.g. {@code upgrade-total}
     * @return its value
     * @throws AssertionError if the MBean has no such attribute
     */
    double get(String metric) {
        Double v = values.get(metric);
        if (v == null) {
            throw new AssertionError(
                    "no attribute " + metric + " on " + KpipeJmx.KPIPE_MBEAN + "; it has " + values.keySet());
        }
        return v;
    }

    /**
     * @param before an earlier snapshot of the same broker
     * @param metric a counter
     * @return how much it grew since {@code before}
     */
    double delta(KpipeMetricsSnapshot before, String metric) {
        return get(metric) - before.get(metric);
    }

    /**
     * Reads every attribute of the MBean.
     *
     * @param node a running node
     * @return the values by attribute name
     * @throws Exception if JMX fails or the MBean is not registered
     */
    static KpipeMetricsSnapshot read(KafkaNode node) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        ObjectName name = new ObjectName(KpipeJmx.KPIPE_MBEAN);
        String[] attributes = Arrays.stream(jmx.getMBeanInfo(name).getAttributes())
                .map(MBeanAttributeInfo::getName)
                .toArray(String[]::new);
        Map<String, Double> values = new TreeMap<>();
        for (Attribute a : jmx.getAttributes(name, attributes).asList()) {
            values.put(a.getName(), ((Number) a.getValue()).doubleValue());
        }
        return new KpipeMetricsSnapshot(values);
    }

    /**
     * Reads snapshots every 5 ms until one satisfies {@code condition}.
     *
     * @param node a running node
     * @param what the condition in words, for the failure message
     * @param timeout how long to try
     * @param condition what to wait for
     * @return the first snapshot that satisfies it
     * @throws AssertionError with the last snapshot if none did within {@code timeout}
     * @throws Exception if JMX fails
     */
    static KpipeMetricsSnapshot await(
            KafkaNode node, String what, Duration timeout, Predicate<KpipeMetricsSnapshot> condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            KpipeMetricsSnapshot s = read(node);
            if (condition.test(s)) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout.toMillis() + " ms on node " + node.id() + ": " + what
                        + "; last values " + s.values());
            }
            TimeUnit.MILLISECONDS.sleep(5); // poll interval
        }
    }

    /**
     * Waits until every per-connection gauge is back to 0 (what a broker looks like once every pipelined connection
     * closed or was handed back).
     *
     * @param node a running node
     * @return the snapshot with all gauges at 0
     * @throws Exception if JMX fails
     */
    static KpipeMetricsSnapshot awaitIdle(KafkaNode node) throws Exception {
        return await(node, "every kpipe gauge back to 0", Duration.ofSeconds(30), KpipeMetricsSnapshot::idle);
    }

    /** @return whether every gauge that tracks live connections, requests or bytes reads 0 */
    boolean idle() {
        for (String gauge : IDLE_GAUGES) {
            if (get(gauge) != 0.0) {
                return false;
            }
        }
        return true;
    }

    /** The gauges that return to 0 when no pipelined connection is open. */
    static final String[] IDLE_GAUGES = {
        "pipelined-connections", "inflight-requests", "inflight-requests-per-connection-avg", "held-responses",
        "held-requests", "throttled-connections", "inflight-bytes", "budget-waiting-connections"
    };
}
