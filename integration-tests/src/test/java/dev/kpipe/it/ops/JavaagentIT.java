// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.kpipe.it.KpipeLog;
import dev.kpipe.it.RoundTrip;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.lang.management.ManagementFactory;
import java.lang.management.RuntimeMXBean;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/**
 * kpipe installed as a Java agent, as the README tells operators to do for a broker JVM that forbids attaching to
 * itself: {@code -javaagent:<libs/kpipe jar>} and {@code -XX:+DisableAttachMechanism} on the broker's command line
 * (what {@code KAFKA_OPTS} passes to {@code java}), with the usual two lines in {@code server.properties}. The control:
 * the same JVM option without the agent cannot be hooked, logs one ERROR that says to use {@code -javaagent}, and runs
 * as stock Kafka.
 */
@KafkaCluster(
        nodes = 1,
        javaagent = true,
        kafkaOpts = {"-XX:+DisableAttachMechanism"})
class JavaagentIT {

    @Test
    void startLineSaysJavaagentInAJvmThatForbidsAttach(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        assertAttachDisabled(node);
        List<String> args = runtime(node).getInputArguments();
        String agent = "-javaagent:" + cluster.pluginJarInLibs();
        assertTrue(args.contains(agent), () -> agent + " in the broker JVM's arguments " + args);

        List<String> started = KpipeLog.startedLines(node.log());
        assertEquals(1, started.size(), () -> "one start line in " + node.logFile() + ": " + started);
        assertTrue(
                started.get(0).contains("install mode javaagent"),
                () -> "install mode javaagent in: " + started.get(0));
        List<KpipeLog.LogRecord> warnings = KpipeLog.records(node.log()).stream()
                .filter(r -> r.warnOrAbove() && r.aboutKpipe())
                .collect(Collectors.toList());
        assertEquals(List.of(), warnings, "no WARN or ERROR about kpipe");
    }

    @Test
    void pipelinesAnIdempotentProducerWithEveryRecordOnceAndInOrder(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        double upgrades = KpipeJmx.kpipe(node, "upgrade-total");
        double pipelined = KpipeJmx.kpipe(node, "pipelined-request-total");
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "javaagent", 3, (short) 1, 5_000);
        RoundTrip.consumeAndVerify(cluster, "javaagent", List.of(acks), Duration.ofSeconds(60));
        assertTrue(KpipeJmx.kpipe(node, "upgrade-total") > upgrades, "the producer's connection was upgraded");
        assertTrue(KpipeJmx.kpipe(node, "pipelined-request-total") - pipelined > 0, "requests were pipelined");
        assertEquals(0, KpipeJmx.produceErrors(node, "OUT_OF_ORDER_SEQUENCE_NUMBER"));
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");
    }

    /** Control: without the agent, a JVM that forbids attach cannot be hooked; kpipe says so once and the broker runs. */
    @Test
    @KafkaCluster(
            nodes = 1,
            kafkaOpts = {"-XX:+DisableAttachMechanism"})
    void withoutTheAgentAJvmThatForbidsAttachLogsOneErrorAndRunsStock(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        assertAttachDisabled(node);
        assertEquals(List.of(), KpipeLog.startedLines(node.log()), "kpipe did not start");
        List<KpipeLog.LogRecord> kpipe = KpipeLog.records(node.log()).stream()
                .filter(KpipeLog.LogRecord::fromKpipe)
                .collect(Collectors.toList());
        assertEquals(1, kpipe.size(), () -> "one kpipe record: " + kpipe);
        assertEquals("ERROR", kpipe.get(0).level());
        assertTrue(kpipe.get(0).text().contains("-javaagent"), () -> "the ERROR tells what to do: " + kpipe.get(0));
        assertFalse(node.jmx().isRegistered(new ObjectName(KpipeJmx.KPIPE_MBEAN)), "no kpipe metrics: not installed");
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "javaagent-control", 1, (short) 1, 1_000);
        RoundTrip.consumeAndVerify(cluster, "javaagent-control", List.of(acks), Duration.ofSeconds(60));
    }

    private static void assertAttachDisabled(KafkaNode node) throws Exception {
        HotSpotDiagnosticMXBean hotspot = ManagementFactory.newPlatformMXBeanProxy(
                node.jmx(), "com.sun.management:type=HotSpotDiagnostic", HotSpotDiagnosticMXBean.class);
        assertEquals("true", hotspot.getVMOption("DisableAttachMechanism").getValue(), "the broker JVM forbids attach");
    }

    private static RuntimeMXBean runtime(KafkaNode node) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        return ManagementFactory.newPlatformMXBeanProxy(
                jmx, ManagementFactory.RUNTIME_MXBEAN_NAME, RuntimeMXBean.class);
    }
}
