// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.inprocess;

import static dev.kpipe.inprocess.InProcessCluster.consecutive;
import static dev.kpipe.inprocess.InProcessCluster.createTopic;
import static dev.kpipe.inprocess.InProcessCluster.gauge;
import static dev.kpipe.inprocess.InProcessCluster.kpipe;
import static dev.kpipe.inprocess.InProcessCluster.produce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import kafka.server.BrokerServer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.Test;

/**
 * Every broker of this JVM gets kpipe from outside the test code: the failsafe execution starts the JVM with {@code
 * -javaagent:kpipe-plugin-0.1.0.jar=kpipe.enable=true,kpipe.max.inflight.requests.per.connection=4}, and the brokers'
 * configuration names no kpipe at all, as in a test written for stock Kafka. A broker's own setting still wins: node 2
 * says {@code kpipe.enable=false}.
 */
class EveryBrokerIT {

    private static final int RECORDS = 200;

    @Test
    void everyBrokerRunsItsOwnKpipeFromTheJvmWideSettingsAndItsOwnKeysWin() throws Exception {
        TestKitNodes nodes = new TestKitNodes.Builder()
                .setNumControllerNodes(1)
                .setNumBrokerNodes(3)
                .setPerServerProperties(Map.of(2, Map.of("kpipe.enable", "false")))
                .build();
        try (KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes)
                .setConfigProp("replica.fetch.min.bytes", "1000000000")
                .setConfigProp("replica.fetch.wait.max.ms", "100")
                .build()) {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            createTopic(cluster, "led-by-0", List.of(0, 1));
            createTopic(cluster, "led-by-1", List.of(1, 0));
            createTopic(cluster, "led-by-2", List.of(2, 0));
            for (String topic : List.of("led-by-0", "led-by-1", "led-by-2")) {
                assertEquals(consecutive(RECORDS), produce(cluster, topic, RECORDS), topic + ": every ack, in order");
            }
            for (int node : List.of(0, 1)) {
                BrokerServer b = cluster.brokers().get(node);
                assertTrue(gauge(b, "pipelined-produce-total") >= 10, "node " + node + " pipelines");
                double max = gauge(b, "inflight-produce-per-connection-max");
                assertTrue(max > 1 && max <= 4, "node " + node + ": the JVM-wide limit of 4 in flight, saw " + max);
            }
            BrokerServer b2 = cluster.brokers().get(2);
            assertTrue(
                    kpipe(b2).map(k -> k.kpipeMetrics().isEmpty()).orElse(true),
                    "node 2's own kpipe.enable=false wins over the JVM's");
        }
    }
}
