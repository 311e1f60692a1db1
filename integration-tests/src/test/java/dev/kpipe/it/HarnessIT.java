// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** The harness itself, on a stock 3-node cluster: topology, overrides, logs, JMX, kill -9 and restart. */
@KafkaCluster(
        nodes = 3,
        installPlugin = false,
        // a killed broker is fenced after 3 s instead of 9 s
        brokerConfig = {"num.partitions=2", "broker.session.timeout.ms=3000", "broker.heartbeat.interval.ms=500"},
        nodeConfig = "2:replica.fetch.wait.max.ms=100")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HarnessIT {

    @Test
    @Order(0)
    void distributionIsLaidOutLikeTheTarball(Cluster cluster) throws Exception {
        List<String> jars;
        try (var s = Files.list(cluster.settings().kafkaHome().resolve("libs"))) {
            jars = s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
        String v = cluster.kafkaVersion();
        for (String expected : List.of(
                "kafka_2.13-" + v + ".jar",
                "kafka-tools-" + v + ".jar",
                "kafka-clients-" + v + ".jar",
                "kafka-server-" + v + ".jar",
                "kafka-raft-" + v + ".jar",
                "kafka-storage-" + v + ".jar")) {
            assertTrue(jars.contains(expected), () -> expected + " in " + jars);
        }
        List<String> slf4j =
                jars.stream().filter(j -> j.startsWith("slf4j-api-")).collect(Collectors.toList());
        assertEquals(1, slf4j.size(), () -> "one slf4j-api: " + slf4j);
        assertTrue(slf4j.get(0).startsWith("slf4j-api-2."), () -> "slf4j-api 2.x for log4j-slf4j2-impl: " + slf4j);
        for (String prefix : List.of("log4j-api-2", "log4j-core-2", "log4j-slf4j2-impl-2")) {
            assertEquals(1, jars.stream().filter(j -> j.startsWith(prefix)).count(), () -> prefix + "* in " + jars);
        }
        assertTrue(jars.stream().noneMatch(j -> j.startsWith("junit") || j.startsWith("kpipe")), () -> jars.toString());
        // stock cluster: its libs/ is the distribution's and nothing else
        try (var s = Files.list(cluster.libsDir())) {
            assertEquals(jars, s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList()));
        }
    }

    @Test
    @Order(1)
    void allBrokersRegisteredAndNodeOneIsTheOnlyController(Cluster cluster) throws Exception {
        Map<Integer, Integer> ports = cluster.admin().describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
                .collect(Collectors.toMap(Node::id, Node::port));
        assertEquals(
                Map.of(
                        1,
                        cluster.node(1).port(),
                        2,
                        cluster.node(2).port(),
                        3,
                        cluster.node(3).port()),
                ports);
        QuorumInfo quorum =
                cluster.admin().describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS);
        assertEquals(1, quorum.leaderId());
        assertEquals(
                List.of(1),
                quorum.voters().stream().map(QuorumInfo.ReplicaState::replicaId).collect(Collectors.toList()));
        assertEquals("broker,controller", cluster.node(1).config().getProperty("process.roles"));
        assertEquals("broker", cluster.node(3).config().getProperty("process.roles"));
    }

    @Test
    @Order(2)
    void clusterAndNodeOverridesReachTheBrokers(Cluster cluster) throws Exception {
        Map<ConfigResource, Config> configs = cluster.admin()
                .describeConfigs(List.of(
                        new ConfigResource(ConfigResource.Type.BROKER, "2"),
                        new ConfigResource(ConfigResource.Type.BROKER, "3")))
                .all()
                .get(30, TimeUnit.SECONDS);
        Config two = configs.get(new ConfigResource(ConfigResource.Type.BROKER, "2"));
        Config three = configs.get(new ConfigResource(ConfigResource.Type.BROKER, "3"));
        assertEquals("100", two.get("replica.fetch.wait.max.ms").value());
        assertEquals("500", three.get("replica.fetch.wait.max.ms").value(), "Kafka's default where not overridden");
        assertEquals("2", two.get("num.partitions").value());
        assertEquals("2", three.get("num.partitions").value());
        assertEquals("2", three.get("num.network.threads").value());
    }

    @Test
    @Order(3)
    void eachNodeLogsToItsOwnFileThroughLog4j2(Cluster cluster) {
        for (KafkaNode node : cluster.nodes()) {
            assertTrue(node.logFile().startsWith(cluster.dir()), node.logFile().toString());
            String log = node.log();
            assertTrue(
                    log.contains("[KafkaRaftServer nodeId=" + node.id() + "] Kafka Server started"),
                    () -> node.logFile() + " lacks the start line of node " + node.id());
            for (KafkaNode other : cluster.nodes()) {
                if (other != node) {
                    assertFalse(
                            log.contains("[KafkaRaftServer nodeId=" + other.id() + "]"),
                            "other node's lines in " + node);
                }
            }
            assertFalse(node.console().contains("SLF4J"), () -> "SLF4J binding problem: " + node.console());
        }
    }

    @Test
    @Order(4)
    void jmxExposesEachBrokersMBeans(Cluster cluster) throws Exception {
        for (KafkaNode node : cluster.nodes()) {
            MBeanServerConnection jmx = node.jmx();
            assertEquals(
                    cluster.kafkaVersion(),
                    jmx.getAttribute(new ObjectName("kafka.server:type=app-info,id=" + node.id()), "Version"));
            assertEquals(
                    3,
                    ((Number) jmx.getAttribute(
                                    new ObjectName("kafka.server:type=KafkaServer,name=BrokerState"), "Value"))
                            .intValue(),
                    "RUNNING");
        }
    }

    @Test
    @Order(5)
    void killedBrokerRestartsAndTheClusterKeepsEveryRecord(Cluster cluster) throws Exception {
        String topic = "restart";
        RoundTrip.Acks before = RoundTrip.produce(cluster, topic, 3, (short) 3, 2_000);
        KafkaNode three = cluster.node(3);
        long pid = three.pid();

        assertEquals(137, three.kill(), "SIGKILL");
        assertFalse(three.isRunning());
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        assertEquals(Set.of(1, 2), cluster.runningIds());
        assertTrue(Files.exists(three.dataDir().resolve("meta.properties")), "storage survives");

        RoundTrip.Acks during = RoundTrip.produceMore(cluster, topic, 2_000, 1_000);
        three.start();
        assertTrue(three.isRunning());
        cluster.awaitReady();
        RoundTrip.Acks after = RoundTrip.produceMore(cluster, topic, 3_000, 1_000);
        RoundTrip.consumeAndVerify(cluster, topic, List.of(before, during, after), Duration.ofSeconds(60));
        assertTrue(three.logSinceStart().contains("[KafkaRaftServer nodeId=3] Kafka Server started"));
    }
}
