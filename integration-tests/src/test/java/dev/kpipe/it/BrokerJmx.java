// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * What the integration tests read from a broker over JMX (its own request counts, a plugin's attributes), and a wait
 * for a condition over such reads. Thread: the test's.
 */
public final class BrokerJmx {

    private BrokerJmx() {}

    /** A condition that may throw (a JMX read). */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /**
     * @return the broker's own count of completed requests of an API ({@code RequestsPerSec}'s {@code Count}, every
     *     version summed), e.g. {@code Produce}
     */
    public static long kafkaRequests(KafkaNode node, String api) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        long count = 0;
        for (ObjectName n : jmx.queryNames(
                new ObjectName("kafka.network:type=RequestMetrics,name=RequestsPerSec,request=" + api + ",*"), null)) {
            try {
                count += ((Number) jmx.getAttribute(n, "Count")).longValue();
            } catch (InstanceNotFoundException e) {
                // removed between the query and the read
            }
        }
        return count;
    }

    /** @return a numeric attribute of an MBean of the node */
    public static double attribute(KafkaNode node, ObjectName name, String attribute) throws Exception {
        return ((Number) node.jmx().getAttribute(name, attribute)).doubleValue();
    }

    /**
     * Polls {@code condition} every 20 ms until it holds.
     *
     * @throws AssertionError naming {@code what} if it does not hold within {@code timeout}
     */
    public static void await(String what, Duration timeout, Condition condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout.toSeconds() + " s: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20); // polling a condition
        }
    }
}
