// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Kafka 3.9.1 in ZooKeeper mode (the last line that has it; 3.8 too): the harness runs a ZooKeeper server from the
 * distribution's jars and two brokers built by {@code kafka.server.KafkaServer}; kpipe installs the same way (one
 * INFO line naming 3.9.1, the 3.8-3.9 binding) and pipelines the same way. The whole core suite also runs in this mode
 * (failsafe execution {@code core-kafka-3.9.1-zk}); this test checks the mode itself, so that execution cannot
 * silently fall back to KRaft.
 */
class ZooKeeperModeIT {
    private static final String VERSION = "3.9.1";

    @Test
    @KafkaCluster(nodes = 2, kafkaVersion = VERSION, zookeeper = true)
    void brokersRunOnZooKeeperAndKpipePipelinesThem(Cluster cluster) throws Exception {
        assertTrue(cluster.zookeeperMode());
        for (KafkaNode node : List.of(cluster.node(1), cluster.node(2))) {
            String log = node.log();
            assertTrue(
                    log.contains("Connecting to zookeeper on ") && log.contains("(kafka.server.KafkaServer)"),
                    () -> "a ZooKeeper-mode broker (KafkaServer): " + node.logFile());
            assertTrue(!node.config().containsKey("process.roles"), "no process.roles");
            List<String> started = KpipeLog.startedLines(log);
            assertEquals(1, started.size(), () -> "one kpipe start line in " + node.logFile());
            assertTrue(started.get(0).contains("Kafka " + VERSION), started::toString);
        }
        KafkaNode node = cluster.node(1);
        double upgradesBefore = KpipeJmx.kpipe(node, "upgrade-total");
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "zk-mode", 3, (short) 2, 2_000);
        RoundTrip.consumeAndVerify(cluster, "zk-mode", List.of(acks), Duration.ofSeconds(60));
        assertTrue(
                KpipeJmx.kpipe(node, "upgrade-total") + KpipeJmx.kpipe(cluster.node(2), "upgrade-total")
                        > upgradesBefore,
                "a producer connection was pipelined");
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");
    }
}
