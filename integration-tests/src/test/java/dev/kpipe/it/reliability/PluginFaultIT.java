// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.faults.FaultyStoragePressure;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.management.ObjectName;
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
 * Faults in kpipe's back-pressure path on a real broker, injected through a real plug point: {@code
 * kpipe.storage.pressure.class} names {@link FaultyStoragePressure}, copied into the broker's {@code libs/} as its own
 * jar, which throws on every {@value #EVERY}th call. kpipe consults it before letting a pipelined connection read its
 * next request; on a fault it counts it ({@code plugin-fault-total}) and lets that connection read its next request
 * as a classic one would (once every earlier response is written). A pipelined idempotent producer meanwhile sends
 * {@value #RECORDS} records: every record is stored once, in order; kpipe's fault count equals the faults the injector
 * threw; the broker's network threads are the same ones, alive, as before; nothing was logged as uncaught; the broker
 * keeps serving and kpipe's live state returns to 0.
 *
 * <p>Faults of the classification policy have no plug point in a real broker (the policy is kpipe's own code; its one
 * external input, the broker's topic id resolver, cannot be made to throw from outside): they are injected in the
 * fake-broker unit tests ({@code PipelineFaultsTest}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PluginFaultIT {

    private static final int EVERY = 7;
    private static final int RECORDS = Integer.getInteger("kpipe.it.faults.records", 60_000);
    private static final int PARTITIONS = 3;
    private static final String TOPIC = "plugin-faults";

    private Cluster cluster;

    @BeforeAll
    void start() throws Exception {
        Path jar = injectorJar();
        cluster = Cluster.start(ClusterSpec.builder()
                .name("PluginFaultIT")
                .extraLib(jar)
                .brokerConfig("kpipe.storage.pressure.class", FaultyStoragePressure.class.getName())
                .brokerConfig(FaultyStoragePressure.EVERY, Integer.toString(EVERY))
                .build());
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void storagePressureFaultsAreCountedAndHandledClassicallyAndNothingIsLost() throws Exception {
        cluster.createTopic(TOPIC, PARTITIONS, 1);
        KafkaNode node = cluster.node(1);
        List<String> networkThreads = networkThreads(node);
        double pipelinedBefore = KpipeJmx.kpipe(node, "pipelined-request-total");

        Map<String, Object> p = new HashMap<>(cluster.clientConfig());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1024); // many small requests: many back-pressure checks
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        long t0 = System.nanoTime();
        try (KafkaProducer<Long, Long> producer = new KafkaProducer<>(p, new LongSerializer(), new LongSerializer())) {
            for (long seq = 0; seq < RECORDS; seq++) {
                long s = seq;
                producer.send(new ProducerRecord<>(TOPIC, (int) (seq % PARTITIONS), seq, seq), (md, e) -> {
                    if (e != null) {
                        errors.add(s + ": " + e);
                    }
                });
            }
            producer.flush();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(List.of(), List.copyOf(errors), "producer errors");
        verifyStoredOnceInOrder();

        double pipelined = KpipeJmx.kpipe(node, "pipelined-request-total") - pipelinedBefore;
        long[] counts = awaitFaultCountsAgree(node);
        System.out.printf(
                "PluginFaultIT: %d records from a pipelined idempotent producer in %d ms, each stored once"
                        + " in order; %.0f requests pipelined; the storage pressure plug-in was called %d times and threw %d"
                        + " faults; kpipe's plugin-fault-total %d%n",
                RECORDS, ms, pipelined, counts[0], counts[1], counts[2]);
        assertTrue(pipelined > 0, "the producer's requests were pipelined");
        assertTrue(counts[1] > 0, "faults were injected");
        assertEquals(counts[1], counts[2], "kpipe counted every injected fault, and nothing else");

        assertEquals(networkThreads, networkThreads(node), "the broker's network threads, all alive, are the same");
        assertEquals(
                List.of(),
                node.logLines().stream()
                        .filter(l -> l.contains("Uncaught exception") || (l.contains("ERROR") && l.contains("kpipe")))
                        .toList(),
                "broker log");

        cluster.createTopic("plugin-faults-after", 1, 1);
        try (SteadyProducer after = new SteadyProducer("after-faults", cluster.clientConfig(), "plugin-faults-after")) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (after.acked() < 100 && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(10); // until the first acks arrive
            }
            after.stopAndVerify();
        }
        KpipeGauges.awaitAllZero(node, Duration.ofSeconds(30));
    }

    /** @return {calls, injected faults, kpipe's plugin-fault-total}, once the two fault counts agree (or 10 s passed) */
    private static long[] awaitFaultCountsAgree(KafkaNode node) throws Exception {
        ObjectName injector = new ObjectName(FaultyStoragePressure.MBEAN);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            long calls = ((Number) node.jmx().getAttribute(injector, "Calls")).longValue();
            long faults = ((Number) node.jmx().getAttribute(injector, "Faults")).longValue();
            long counted = (long) KpipeJmx.kpipe(node, "plugin-fault-total");
            if (faults == counted || System.nanoTime() > deadline) {
                return new long[] {calls, faults, counted};
            }
            TimeUnit.MILLISECONDS.sleep(50); // a network thread may be between the throw and the count
        }
    }

    private void verifyStoredOnceInOrder() {
        List<List<Long>> stored = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) {
            stored.add(new ArrayList<>());
        }
        RecordReadBack.readToEnd(
                cluster,
                TOPIC,
                new LongDeserializer(),
                new LongDeserializer(),
                Duration.ofSeconds(60),
                r -> stored.get(r.partition()).add(r.value()));
        for (int part = 0; part < PARTITIONS; part++) {
            List<Long> want = new ArrayList<>();
            for (long seq = part; seq < RECORDS; seq += PARTITIONS) {
                want.add(seq);
            }
            assertEquals(want, stored.get(part), "partition " + part + ": every record once, in order");
        }
    }

    /** @return the names of the broker's network threads ({@code ...-network-thread-...}), sorted */
    private static List<String> networkThreads(KafkaNode node) throws IOException {
        ThreadMXBean threads = ManagementFactory.newPlatformMXBeanProxy(
                node.jmx(), ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class);
        List<String> names = Arrays.stream(threads.getThreadInfo(threads.getAllThreadIds()))
                .filter(Objects::nonNull)
                .map(ThreadInfo::getThreadName)
                .filter(n -> n.contains("network-thread"))
                .sorted()
                .toList();
        assertTrue(!names.isEmpty(), "network threads found");
        return names;
    }

    /** Packs the injector's classes (package {@code dev.kpipe.it.faults} of the test classes) into a jar. */
    private static Path injectorJar() throws Exception {
        Path classes = Path.of(FaultyStoragePressure.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        Path pkg = classes.resolve("dev/kpipe/it/faults");
        Path dir = Files.createDirectories(Path.of(System.getProperty("kpipe.it.work.dir", "target/it-clusters")));
        Path jar = dir.resolve("kpipe-it-fault-injector.jar");
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream j = new JarOutputStream(out);
                Stream<Path> files = Files.list(pkg)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                j.putNextEntry(new JarEntry("dev/kpipe/it/faults/" + f.getFileName()));
                j.write(Files.readAllBytes(f));
                j.closeEntry();
            }
        }
        return jar;
    }
}
