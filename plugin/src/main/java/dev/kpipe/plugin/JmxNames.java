// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * The JMX names of one broker's kpipe. A JVM that runs one broker (every production install) has kpipe's MBeans under
 * their plain names, {@code kafka.server:type=kpipe-metrics} and {@code kafka.server:type=kpipe-connections}, as
 * operators' dashboards and scripts expect. Where a JVM runs several brokers with kpipe (Kafka's own test harness,
 * {@code KafkaClusterTestKit}, Spring's {@code EmbeddedKafka}), the first broker to start keeps the plain names and
 * each other one adds its node id, {@code kafka.server:type=kpipe-metrics,node-id=2}, so that two brokers' metrics
 * never mix in JMX (each broker's registry is its own in any case). A name is freed when its broker's kpipe closes.
 *
 * <p>Thread-safety: {@link #tags} and the registration that follows it run under {@link #LOCK}.
 */
final class JmxNames {

    /** The tag that tells the brokers of one JVM apart. */
    static final String NODE_ID = "node-id";
    /**
     * Orders the choice of names and the registrations and unregistrations (of {@link KpipeMetrics}' and {@link
     * KpipeConnections}' MBeans) across the brokers of this JVM, a replacing runtime and an old one included.
     */
    static final Object LOCK = new Object();

    private JmxNames() {}

    /**
     * Chooses a broker's tags. Call under {@link #LOCK}, and register the broker's MBeans before leaving it.
     *
     * @param nodeId the broker's node id ({@code node.id}, or {@code broker.id})
     * @return no tags if no other kpipe of this JVM holds the plain metrics name; else {@code node-id=<nodeId>}
     */
    static Map<String, String> tags(String nodeId) {
        try {
            boolean taken = ManagementFactory.getPlatformMBeanServer()
                    .isRegistered(new ObjectName(KpipeMetrics.JMX_PREFIX + ":type=" + KpipeMetrics.GROUP));
            return taken ? Map.of(NODE_ID, nodeId) : Map.of();
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @param base a plain name, e.g. {@code kafka.server:type=kpipe-connections}
     * @param tags the broker's tags
     * @return the name with the tags as key properties, in key order
     */
    static String name(String base, Map<String, String> tags) {
        StringBuilder out = new StringBuilder(base);
        // as Kafka's JmxReporter writes a metric's tags: plain when JMX allows, else quoted
        new TreeMap<>(tags)
                .forEach((k, v) -> out.append(',')
                        .append(k)
                        .append('=')
                        .append(v.matches("[A-Za-z0-9._-]+") ? v : ObjectName.quote(v)));
        return out.toString();
    }
}
