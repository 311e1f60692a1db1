// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import dev.kpipe.it.harness.KafkaNode;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/** Reads kpipe's and the broker's metrics from a node over JMX. */
public final class KpipeJmx {
    /** kpipe's MBean: group {@code kpipe-metrics} in the broker's {@code kafka.server} domain. */
    public static final String KPIPE_MBEAN = "kafka.server:type=kpipe-metrics";

    private KpipeJmx() {}

    /**
     * @param node a running node
     * @param metric a kpipe metric name, e.g. {@code upgrade-total}
     * @return its value
     * @throws Exception if JMX fails or the metric does not exist
     */
    public static double kpipe(KafkaNode node, String metric) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        return ((Number) jmx.getAttribute(new ObjectName(KPIPE_MBEAN), metric)).doubleValue();
    }

    /**
     * The count of produce responses that carried an error code, from the broker's own
     * {@code kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=Produce,error=<ERROR>}.
     *
     * @param node a running node
     * @param error an {@code Errors} name, e.g. {@code OUT_OF_ORDER_SEQUENCE_NUMBER}
     * @return the count; 0 if the broker never recorded that error (the meter does not exist)
     * @throws Exception if JMX fails
     */
    public static long produceErrors(KafkaNode node, String error) throws Exception {
        ObjectName name =
                new ObjectName("kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=Produce,error=" + error);
        try {
            return ((Number) node.jmx().getAttribute(name, "Count")).longValue();
        } catch (InstanceNotFoundException e) {
            return 0;
        }
    }
}
