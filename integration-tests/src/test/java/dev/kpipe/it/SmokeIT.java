// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** One combined (broker+controller) node with kpipe installed and enabled, as an operator would run it. */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(nodes = 1, kpipe = true)
class SmokeIT {

    @Test
    void idempotentProducerRoundTripOf10kRecordsKeepsContentAndPerPartitionOrder(Cluster cluster) throws Exception {
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "smoke", 3, (short) 1, 10_000);
        RoundTrip.consumeAndVerify(cluster, "smoke", List.of(acks), Duration.ofSeconds(60));
        assertEquals(
                0.0,
                KpipeJmx.kpipe(cluster.node(1), "plugin-fault-total"),
                "no throwable caught in kpipe's hooks or plugin");
    }

    /**
     * Kafka's default {@code metric.reporters} is its JmxReporter; the two install lines replace that
     * list, so kpipe keeps the broker's Kafka-metrics MBeans (here the socket server's) in JMX itself.
     */
    @Test
    void brokerMetricsStayInJmxWithOnlyKpipeAsMetricReporter(Cluster cluster) throws Exception {
        javax.management.MBeanServerConnection jmx = cluster.node(1).jmx();
        org.junit.jupiter.api.Assertions.assertFalse(
                jmx.queryNames(new javax.management.ObjectName("kafka.server:type=socket-server-metrics,*"), null)
                        .isEmpty(),
                "the broker's socket-server-metrics MBeans are registered");
        org.junit.jupiter.api.Assertions.assertFalse(
                jmx.queryNames(new javax.management.ObjectName("kafka.server:type=kpipe-metrics"), null)
                        .isEmpty(),
                "kpipe's own MBean is registered");
    }

    @Test
    void installsExactlyOnceAndLeavesTheControllerListenerAlone(Cluster cluster) {
        KafkaNode node = cluster.node(1);
        assertTrue(node.isController(), "node 1 runs broker and controller");
        List<String> started = KpipeLog.startedLines(node.log());
        assertEquals(
                1,
                started.size(),
                () -> "expected exactly one 'kpipe <version> started' line in " + node.logFile() + ", got "
                        + started.size() + ": " + started);
        String line = started.get(0);
        String version = cluster.settings().pluginVersion();
        assertTrue(line.contains("kpipe " + version + " started"), () -> "plugin version " + version + " in: " + line);
        assertTrue(
                line.contains(cluster.kafkaVersion()),
                () -> "Kafka version " + cluster.kafkaVersion() + " in: " + line);
        String listeners =
                KpipeLog.listeners(line).orElseThrow(() -> new AssertionError("no listeners=[...] in: " + line));
        assertFalse(
                Pattern.compile("\\b" + KafkaNode.CONTROLLER_LISTENER + "\\b")
                        .matcher(listeners)
                        .find(),
                () -> "controller listener in kpipe's listeners: " + line);
        assertFalse(
                listeners.contains(":" + node.controllerPort()), () -> "controller port in kpipe's listeners: " + line);
        assertTrue(
                Pattern.compile("\\b" + KafkaNode.CLIENT_LISTENER + "\\b")
                        .matcher(listeners)
                        .find(),
                () -> "client listener missing from kpipe's listeners: " + line);
    }

    /**
     * Self-attach loads kpipe's own jar from {@code libs/} as the agent: it writes no temporary agent jar into the
     * broker's {@code java.io.tmpdir} (Byte Buddy's {@code ByteBuddyAgent.install()} would, and a broker killed with
     * SIGKILL leaves that file behind on every start); nor does {@code -javaagent} where the run installs kpipe that way
     * ({@code kpipe.it.javaagent}).
     */
    @Test
    void installWritesNoFileIntoTheBrokersTmpDir(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        String mode = cluster.settings().networkEventListener()
                ? "no advice: the broker calls the SPI" // Kafka with kpipe's reference patch
                : cluster.javaagent() ? "install mode javaagent" : "install mode attach";
        assertTrue(KpipeLog.startedLines(node.log()).get(0).contains(mode), () -> "installed with " + mode);
        assertEquals("" + node.tmpDir(), javaIoTmpDir(node), "the broker's java.io.tmpdir is its own folder");
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(node.tmpDir())) {
            List<String> agentJars = files.map(f -> f.getFileName().toString())
                    .filter(f -> f.endsWith(".jar"))
                    .toList();
            assertEquals(List.of(), agentJars, "jars written into " + node.tmpDir() + " while the broker runs");
        }
    }

    private static String javaIoTmpDir(KafkaNode node) throws Exception {
        javax.management.openmbean.TabularData props = (javax.management.openmbean.TabularData)
                node.jmx().getAttribute(new javax.management.ObjectName("java.lang:type=Runtime"), "SystemProperties");
        return (String) props.get(new Object[] {"java.io.tmpdir"}).get("value");
    }
}
