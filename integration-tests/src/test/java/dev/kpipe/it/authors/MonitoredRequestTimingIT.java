// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.authors;

import static dev.kpipe.it.BrokerJmx.attribute;
import static dev.kpipe.it.BrokerJmx.await;
import static dev.kpipe.it.BrokerJmx.kafkaRequests;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.examples.timing.MonitoredRequestTiming;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.LongSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The KIP-877 variant of the request-timing example ({@link MonitoredRequestTiming}) as a broker's only listener, on
 * Kafka 4.3.1 with kpipe's reference patch (failsafe execution {@code core-kafka-4.3.1-patched}; elsewhere it skips):
 * no kpipe, the example's jar in {@code libs/}, {@code network.event.listener.class} naming it. The broker creates it,
 * configures it and wraps it with {@code Plugin.wrapInstance}, whose {@code withPluginMetrics} has never run with a
 * {@code Monitorable} listener before. A producer sends {@value #REQUESTS} produce requests (one record each); checked:
 * the timing metrics are the broker's, under {@code kafka.server:type=plugins,config=network.event.listener.class,
 * class=MonitoredRequestTiming}, their {@code request-total} for Produce equals {@value #REQUESTS} and the broker's own
 * {@code RequestsPerSec} count, the example registered nothing in its own JMX domain, and the broker stops cleanly
 * (closing the plugin). The metrics' removal is checked by the example's unit test. About 15 s.
 */
@Tag("core") // so that the execution core-kafka-4.3.1-patched runs it; it skips on brokers without the patch
@EnabledIfSystemProperty(
        named = "kpipe.it.network.event.listener",
        matches = "true",
        disabledReason = "needs a broker that creates network.event.listener.class: kafka-4.3.1-patched"
                + " (-Dkpipe.it.patched.skip=false)")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MonitoredRequestTimingIT {

    private static final String TOPIC = "monitored";
    /** One record per produce request (batch.size=1, a single partition). */
    private static final int REQUESTS = 200;

    private static final Duration AWAIT = Duration.ofSeconds(60);
    private static final String PLUGIN = "kafka.server:type=plugins,config=network.event.listener.class,class="
            + MonitoredRequestTiming.class.getSimpleName();

    private Cluster cluster;

    @BeforeAll
    void start() throws Exception {
        cluster = Cluster.start(ClusterSpec.builder()
                .name("MonitoredRequestTimingIT")
                .nodes(1)
                .installPlugin(false)
                .extraLib(RequestTimingIT.exampleJar())
                .brokerConfig("network.event.listener.class", MonitoredRequestTiming.class.getName())
                .build());
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theBrokersPluginMetricsCountEveryProduceRequest() throws Exception {
        cluster.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1)), AWAIT);
        KafkaNode node = cluster.node(1);
        ObjectName produce = new ObjectName(PLUGIN + ",request=Produce");
        long producesBefore = kafkaRequests(node, "Produce");

        Map<String, Object> p = new HashMap<>(cluster.clientConfig());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1); // a batch per record: one record per produce request
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<Long, Long> producer = new KafkaProducer<>(p, new LongSerializer(), new LongSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (long i = 0; i < REQUESTS; i++) {
                sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, i, i)));
            }
            for (var f : sent) {
                offsets.add(f.get(AWAIT.toSeconds(), TimeUnit.SECONDS).offset());
            }
        }
        List<Long> want = new ArrayList<>();
        for (long i = 0; i < REQUESTS; i++) {
            want.add(i);
        }
        assertEquals(want, offsets, "every record stored once, in order");
        assertEquals(0, producesBefore, "no produce request before the producer's");
        assertEquals(REQUESTS, kafkaRequests(node, "Produce"), "the broker counted a produce request per record");

        await(
                "the plugin's request-total for Produce reaches " + REQUESTS,
                AWAIT,
                () -> node.jmx().isRegistered(produce) && attribute(node, produce, "request-total") >= REQUESTS);
        assertEquals(REQUESTS, attribute(node, produce, "request-total"), "every produce request timed, once");
        double readToDispatchMax = attribute(node, produce, "read-to-dispatch-time-ms-max");
        double dispatchToWriteAvg = attribute(node, produce, "dispatch-to-write-time-ms-avg");
        assertTrue(readToDispatchMax > 0, "read-to-dispatch timed: " + readToDispatchMax);
        assertTrue(dispatchToWriteAvg >= 0, "dispatch-to-write timed: " + dispatchToWriteAvg);
        ObjectName all = new ObjectName(PLUGIN);
        assertEquals(0, attribute(node, all, "untracked-total"), "every event was of a request it tracked");
        assertEquals(
                Set.of(),
                node.jmx().queryNames(new ObjectName("dev.kpipe.examples:*"), null),
                "no metrics of its own: the broker's plugin metrics only");
        System.out.printf(
                "MonitoredRequestTimingIT: %s request-total %.0f (the broker counted %d); read-to-dispatch max %.3f"
                        + " ms; dispatch-to-write avg %.3f ms%n",
                produce,
                attribute(node, produce, "request-total"),
                kafkaRequests(node, "Produce"),
                readToDispatchMax,
                dispatchToWriteAvg);

        assertEquals(143, node.stop(), "a graceful stop (SIGTERM), which closes the plugin");
        String log = node.log();
        assertTrue(
                log.contains("[SocketServer listenerType=BROKER, nodeId=1] Shutdown completed"),
                "the socket server's shutdown, which closes the plugin, completed");
        assertFalse(
                log.contains("Failed to close network event listener"),
                "the broker closed the listener and its plugin metrics without an error");
    }
}
