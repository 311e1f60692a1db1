// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.inprocess;

import static dev.kpipe.inprocess.InProcessCluster.consecutive;
import static dev.kpipe.inprocess.InProcessCluster.createTopic;
import static dev.kpipe.inprocess.InProcessCluster.gauge;
import static dev.kpipe.inprocess.InProcessCluster.kpipe;
import static dev.kpipe.inprocess.InProcessCluster.produce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.KpipePlugin;
import dev.kpipe.spi.NetworkEventListener;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.management.ObjectName;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.Test;

/**
 * Three brokers in this JVM (Kafka's own {@link KafkaClusterTestKit}, one KRaft controller beside them), each naming
 * kpipe in {@code metric.reporters} with settings of its own: node 0 with kpipe's defaults, node 1 with {@code
 * kpipe.enable=false}, node 2 with {@code kpipe.max.inflight.requests.per.connection=2} and an observer that fails at
 * every dispatch ({@link FaultyObserver}). The followers fetch every {@value #W_MS} ms, so an acks=all produce waits up
 * to that long and an idempotent producer keeps 5 requests in flight: each broker pipelines as its own config says,
 * counts its own faults, and takes its own dynamic changes. Then node 2 stops, and the other two go on with their own
 * kpipe.
 */
class SharedJvmBrokersIT {

    /** W: the followers' fetch wait, after which an acks=all produce is acknowledged. */
    private static final int W_MS = 100;

    private static final int RECORDS = 200;

    @Test
    void eachBrokerPipelinesAsItsOwnConfigSaysAndTheOthersOutliveAStoppedOne() throws Exception {
        TestKitNodes nodes = new TestKitNodes.Builder()
                .setNumControllerNodes(1)
                .setNumBrokerNodes(3)
                .setPerServerProperties(Map.of(
                        1,
                        Map.of("kpipe.enable", "false"),
                        2,
                        Map.of(
                                "kpipe.max.inflight.requests.per.connection",
                                "2",
                                "kpipe.spi.observer.classes",
                                FaultyObserver.class.getName())))
                .build();
        try (KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes)
                .setConfigProp("metric.reporters", KpipePlugin.class.getName())
                .setConfigProp("kpipe.enable", "true")
                .setConfigProp("replica.fetch.min.bytes", "1000000000")
                .setConfigProp("replica.fetch.wait.max.ms", Integer.toString(W_MS))
                .build()) {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            createTopic(cluster, "led-by-0", List.of(0, 1));
            createTopic(cluster, "led-by-1", List.of(1, 2));
            createTopic(cluster, "led-by-2", List.of(2, 0));
            BrokerServer b0 = cluster.brokers().get(0);
            BrokerServer b1 = cluster.brokers().get(1);
            BrokerServer b2 = cluster.brokers().get(2);
            assertEquals(2, kpipeMBeans().size(), () -> "one kpipe-metrics MBean per kpipe broker: " + kpipeMBeans());

            for (String topic : List.of("led-by-0", "led-by-1", "led-by-2")) {
                assertEquals(consecutive(RECORDS), produce(cluster, topic, RECORDS), topic + ": every ack, in order");
            }

            // node 0: kpipe's defaults, up to 5 in flight (the producer's own limit)
            double pipelined0 = gauge(b0, "pipelined-produce-total");
            double max0 = gauge(b0, "inflight-produce-per-connection-max");
            assertTrue(pipelined0 >= 10, () -> "node 0 pipelined " + pipelined0 + " produce requests");
            assertTrue(max0 > 2 && max0 <= 5, () -> "node 0: at most " + max0 + " in flight on one connection");
            // node 1: kpipe.enable=false, its own setting over the cluster's
            assertTrue(kpipe(b1).orElseThrow().kpipeMetrics().isEmpty(), "node 1 runs without pipelining");
            // node 2: its own limit of 2
            assertTrue(gauge(b2, "pipelined-produce-total") >= 10, "node 2 pipelines");
            assertEquals(2.0, gauge(b2, "inflight-produce-per-connection-max"), "node 2: its own limit, 2 in flight");
            // node 2's observer failed at every dispatch: counted on node 2 only, not summed over the JVM's brokers
            double faults2 = gauge(b2, "plugin-fault-total");
            assertTrue(faults2 >= 10, () -> "node 2 counted its observer's faults: " + faults2);
            assertEquals(0.0, gauge(b0, "plugin-fault-total"), "node 2's faults are not node 0's");

            assertEquals(2, mbeans("kafka.server:type=kpipe-connections,*").size(), "one connection dump per kpipe");

            // each broker's own dynamic configuration (KIP-226, per broker): node 2's limit up to 4, node 1 turned on
            alter(cluster, 2, "kpipe.max.inflight.requests.per.connection", "4");
            alter(cluster, 1, "kpipe.enable", "true");
            waitFor(() -> kpipe(b1).orElseThrow().kpipeMetrics().isPresent(), "node 1's kpipe starts at runtime");
            assertEquals(
                    consecutive(RECORDS),
                    produce(cluster, "led-by-2", RECORDS).stream()
                            .map(o -> o - RECORDS)
                            .toList());
            assertEquals(
                    consecutive(RECORDS),
                    produce(cluster, "led-by-1", RECORDS).stream()
                            .map(o -> o - RECORDS)
                            .toList());
            double max2 = gauge(b2, "inflight-produce-per-connection-max");
            assertTrue(max2 > 2 && max2 <= 4, () -> "node 2's new limit of 4 in flight: " + max2);
            assertTrue(gauge(b1, "pipelined-produce-total") >= 10, "node 1 pipelines once turned on");
            assertEquals(3, kpipeMBeans().size(), () -> "three kpipe brokers now: " + kpipeMBeans());

            Metrics registry0 = kpipe(b0).orElseThrow().kpipeMetrics().orElseThrow();
            b2.shutdown();
            b2.awaitShutdown();
            assertEquals(2, kpipeMBeans().size(), () -> "node 2's MBeans are gone: " + kpipeMBeans());
            assertTrue(
                    Files.readString(log()).contains("stopped on node 2: "),
                    "node 2's kpipe logged its stop line in " + log());

            // node 0 goes on with its own kpipe: the same registry, its counters carried on, not reset
            assertEquals(
                    consecutive(RECORDS),
                    produce(cluster, "led-by-0", RECORDS).subList(0, RECORDS).stream()
                            .map(o -> o - RECORDS)
                            .toList(),
                    "led-by-0: the second run's acks follow the first's");
            assertSame(registry0, kpipe(b0).orElseThrow().kpipeMetrics().orElseThrow(), "node 0's registry");
            assertTrue(gauge(b0, "pipelined-produce-total") >= pipelined0 + 10, "node 0 pipelined again");
            assertTrue(gauge(b0, "inflight-produce-per-connection-max") >= max0, "node 0's gauge intact");
            assertTrue(gauge(b1, "pipelined-produce-total") >= 10, "node 1's gauges intact");
            assertEquals(0.0, gauge(b0, "plugin-fault-total"), "no fault on node 0");
            assertEquals(0.0, gauge(b1, "plugin-fault-total"), "no fault on node 1");
        }
    }

    /** An SPI observer ({@code kpipe.spi.observer.classes}) that throws at every dispatch: a fault per request. */
    public static final class FaultyObserver implements NetworkEventListener<Object, Object> {
        @Override
        public void onRequestDispatched(Object request, RequestContext context) {
            throw new IllegalStateException("an observer's bug");
        }
    }

    private static Set<ObjectName> kpipeMBeans() {
        return mbeans("kafka.server:type=kpipe-metrics,*");
    }

    private static Set<ObjectName> mbeans(String pattern) {
        try {
            return ManagementFactory.getPlatformMBeanServer().queryNames(new ObjectName(pattern), null);
        } catch (javax.management.MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Alters one broker's dynamic config, as {@code kafka-configs --entity-type brokers --entity-name <node>}. */
    private static void alter(KafkaClusterTestKit cluster, int node, String key, String value) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.incrementalAlterConfigs(Map.of(
                            new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(node)),
                            List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET))))
                    .all()
                    .get();
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 60 s: " + what);
            }
            Thread.sleep(50);
        }
    }

    private static Path log() {
        return Path.of(System.getProperty("kpipe.in.process.log"));
    }
}
