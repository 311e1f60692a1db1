// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.authors;

import static dev.kpipe.it.BrokerJmx.attribute;
import static dev.kpipe.it.BrokerJmx.await;
import static dev.kpipe.it.BrokerJmx.kafkaRequests;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.examples.timing.RequestTiming;
import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The second SPI listener of {@code docs/plugin-authors.md} ({@code examples/request-timing}) on a real broker beside
 * kpipe: its jar in {@code libs/}, named in {@code kpipe.spi.observer.classes}. An idempotent acks=all producer (5 in
 * flight: pipelined by kpipe) writes {@value #RECORDS} records, one per request. Checked: kpipe pipelines as before
 * (its {@code pipelined-produce-total} grows; every record acknowledged in send order and
 * stored once, in order), and the observer timed every produce and fetch request the broker completed: its {@code
 * request-total} per API equals the broker's own count ({@code kafka.network:type=RequestMetrics,name=RequestsPerSec},
 * every version), no event was of a request it did not track, and the times are real (read-to-dispatch above 0). The
 * times are printed beside the broker's own {@code TotalTimeMs}. About 15 s after the cluster's start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RequestTimingIT {

    private static final String TOPIC = "timed";
    /** One record per produce request (batch.size=1): as many requests as records, 5 in flight. */
    private static final int RECORDS = 500;

    private static final Duration AWAIT = Duration.ofSeconds(60);

    private Cluster cluster;

    @BeforeAll
    void start() throws Exception {
        cluster = Cluster.start(ClusterSpec.builder()
                .name("RequestTimingIT")
                .nodes(1)
                .extraLib(exampleJar())
                .brokerConfig("kpipe.spi.observer.classes", RequestTiming.class.getName())
                .build());
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theObserverTimesEveryProduceRequestWhileKpipePipelinesThem() throws Exception {
        cluster.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1)), AWAIT);
        KafkaNode node = cluster.node(1);
        ObjectName produce = new ObjectName("dev.kpipe.examples:type=request-timing-metrics,broker=1,request=Produce");
        ObjectName all = new ObjectName("dev.kpipe.examples:type=request-timing-metrics,broker=1");
        double pipelinedBefore = KpipeJmx.kpipe(node, "pipelined-produce-total");

        Map<String, Object> p = new HashMap<>(cluster.clientConfig());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "timed-producer");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1); // a batch per record: one record per produce request
        ConcurrentLinkedQueue<Long> acked = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        try (KafkaProducer<Long, Long> producer = new KafkaProducer<>(p, new LongSerializer(), new LongSerializer())) {
            for (long i = 0; i < RECORDS; i++) {
                long seq = i;
                producer.send(new ProducerRecord<>(TOPIC, 0, seq, seq), (md, e) -> {
                    if (e != null) {
                        errors.add(seq + ": " + e);
                    } else {
                        acked.add(seq);
                    }
                });
            }
            producer.flush();
        }
        assertEquals(List.of(), List.copyOf(errors), "producer errors");
        List<Long> want = new ArrayList<>();
        for (long i = 0; i < RECORDS; i++) {
            want.add(i);
        }
        assertEquals(want, List.copyOf(acked), "every record acknowledged, in send order");
        assertTrue(KpipeJmx.kpipe(node, "pipelined-produce-total") > pipelinedBefore, "kpipe pipelined the producer");

        long brokerProduces = kafkaRequests(node, "Produce");
        assertTrue(brokerProduces >= RECORDS, "a produce request per record: " + brokerProduces);
        await(
                "the observer timed every produce request the broker completed (" + brokerProduces + ")",
                AWAIT,
                () -> attribute(node, produce, "request-total") == kafkaRequests(node, "Produce"));
        double readToDispatchAvg = attribute(node, produce, "read-to-dispatch-time-ms-avg");
        double readToDispatchMax = attribute(node, produce, "read-to-dispatch-time-ms-max");
        double dispatchToWriteAvg = attribute(node, produce, "dispatch-to-write-time-ms-avg");
        double dispatchToWriteMax = attribute(node, produce, "dispatch-to-write-time-ms-max");
        assertTrue(readToDispatchAvg > 0 && readToDispatchMax >= readToDispatchAvg, "read-to-dispatch timed");
        assertTrue(dispatchToWriteMax >= dispatchToWriteAvg && dispatchToWriteAvg >= 0, "dispatch-to-write timed");

        List<Long> stored = new ArrayList<>();
        RecordReadBack.readToEnd(
                cluster, TOPIC, new LongDeserializer(), new LongDeserializer(), AWAIT, r -> stored.add(r.value()));
        assertEquals(want, stored, "every acknowledged record once, in order");
        ObjectName fetch = new ObjectName("dev.kpipe.examples:type=request-timing-metrics,broker=1,request=Fetch");
        await(
                "the observer timed every fetch request the broker completed",
                AWAIT,
                () -> attribute(node, fetch, "request-total") == kafkaRequests(node, "Fetch"));
        assertEquals(0, attribute(node, all, "untracked-total"), "every event was of a request it tracked");

        System.out.printf(
                "RequestTimingIT: %d produce requests timed (the broker counted %d; kpipe pipelined %.0f), %d fetch;"
                        + " read-to-dispatch avg %.3f ms, max %.3f ms; dispatch-to-write avg %.3f ms, max %.3f ms;"
                        + " the broker's own Produce TotalTimeMs mean %.3f ms; untracked %.0f,"
                        + " written-before-dispatch %.0f%n",
                (long) attribute(node, produce, "request-total"),
                brokerProduces,
                KpipeJmx.kpipe(node, "pipelined-produce-total") - pipelinedBefore,
                (long) attribute(node, fetch, "request-total"),
                readToDispatchAvg,
                readToDispatchMax,
                dispatchToWriteAvg,
                dispatchToWriteMax,
                ((Number) node.jmx()
                                .getAttribute(
                                        new ObjectName(
                                                "kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce"),
                                        "Mean"))
                        .doubleValue(),
                attribute(node, all, "untracked-total"),
                attribute(node, all, "written-before-dispatch-total"));
    }

    /** The example's classes as a jar: its Maven jar, or its classes packed when the reactor gives a folder. */
    static Path exampleJar() throws Exception {
        Path where = Path.of(RequestTiming.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        if (Files.isRegularFile(where)) {
            return where;
        }
        Path dir = Files.createDirectories(Path.of(System.getProperty("kpipe.it.work.dir", "target/it-clusters")));
        Path jar = dir.resolve("kpipe-example-request-timing.jar");
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream j = new JarOutputStream(out);
                Stream<Path> files = Files.walk(where)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                j.putNextEntry(new JarEntry(where.relativize(f).toString().replace('\\', '/')));
                j.write(Files.readAllBytes(f));
                j.closeEntry();
            }
        }
        return jar;
    }
}
