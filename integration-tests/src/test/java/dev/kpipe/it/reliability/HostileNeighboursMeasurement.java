// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * A measurement, not a CI test (its name does not end in IT; run it with {@code mvn -B verify -pl integration-tests
 * -Dit.test=HostileNeighboursMeasurement -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false
 * -Dkpipe.it.crossVersion.skip=true -Dkpipe.it.java25.skip=true}): does a well-behaved producer suffer from hostile
 * neighbours more on kpipe than on stock? A stock and a kpipe cluster of {@link ConnectionEdgesIT}'s shape (2 nodes,
 * the follower acknowledging every {@value ConnectionEdgesIT#WINDOW_MS} ms) side by side; on each in turn (stock,
 * kpipe, stock, kpipe), for {@value #WINDOW_S} s: an idempotent Java producer (acks=all, 5 in flight) sending 1 KiB
 * records as fast as it is acknowledged, beside {@value #HOSTILE} threads that each open connection after connection
 * and send {@link ConnectionEdgesIT}'s generated streams (valid requests, then a half-close, a refused size or a
 * truncated frame). Printed per run: the producer's acknowledged records, the longest and the 99th-percentile gap
 * between consecutive acknowledgements, and the hostile connections run. Checked only that every send was
 * acknowledged without error and hostile connections ran.
 */
class HostileNeighboursMeasurement {
    private static final int HOSTILE = 16;
    private static final int WINDOW_S = 20;
    private static final String GOOD = "good-neighbour";

    @Test
    void ackGapsOfAWellBehavedProducerBesideHostileConnections() throws Exception {
        ExecutorService starts = Executors.newFixedThreadPool(2);
        Future<Cluster> s = starts.submit(() -> Cluster.start(
                ConnectionEdgesIT.spec("Neighbours-stock").installPlugin(false).build()));
        Future<Cluster> k = starts.submit(
                () -> Cluster.start(ConnectionEdgesIT.spec("Neighbours-kpipe").build()));
        Cluster stock = null;
        Cluster kpipe = null;
        try {
            stock = s.get();
            kpipe = k.get();
            for (Cluster c : List.of(stock, kpipe)) {
                c.createTopics(
                        List.of(
                                new NewTopic(ConnectionEdgesIT.TOPIC, Map.of(0, List.of(1, 2))),
                                new NewTopic(GOOD, Map.of(0, List.of(1, 2)))
                                        .configs(Map.of("min.insync.replicas", "2"))),
                        Duration.ofSeconds(60));
            }
            List<String> lines = new ArrayList<>();
            List<ConnectionEdgesIT.Stream> streams = ConnectionEdgesIT.mix(4242, 64);
            int run = 0;
            for (Cluster c : List.of(stock, kpipe, stock, kpipe)) {
                String side = c == stock ? "stock" : "kpipe";
                Result r = measure(c, streams, run++);
                lines.add(String.format(
                        "%-5s acked %5d  longest gap %5d ms  p99 gap %4d ms  median gap %3d ms  hostile connections %5d",
                        side, r.acked, r.longestGapMs, r.p99GapMs, r.medianGapMs, r.hostileConnections));
                assertTrue(r.hostileConnections > 0, "hostile connections ran");
            }
            System.out.println("HostileNeighboursMeasurement (W = " + ConnectionEdgesIT.WINDOW_MS + " ms, " + HOSTILE
                    + " hostile threads, " + WINDOW_S + " s per run):\n  " + String.join("\n  ", lines));
        } finally {
            starts.shutdownNow();
            for (Cluster c : Arrays.asList(kpipe, stock)) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    record Result(long acked, long longestGapMs, long p99GapMs, long medianGapMs, long hostileConnections) {}

    private static Result measure(Cluster c, List<ConnectionEdgesIT.Stream> streams, int run) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong hostileConnections = new AtomicLong();
        ExecutorService hostile = Executors.newFixedThreadPool(HOSTILE);
        KafkaNode leader = c.node(1);
        for (int t = 0; t < HOSTILE; t++) {
            int thread = t;
            hostile.submit(() -> {
                int i = thread;
                while (!stop.get()) {
                    try {
                        ConnectionEdgesIT.run(leader, streams.get(i % streams.size()), 100_000 * run + i);
                        hostileConnections.incrementAndGet();
                    } catch (Exception e) {
                        // a hostile connection may fail in any way; the measurement is the good producer's
                    }
                    i += HOSTILE;
                }
                return null;
            });
        }
        Map<String, Object> pc = new HashMap<>(c.clientConfig());
        pc.put(ProducerConfig.ACKS_CONFIG, "all");
        pc.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        pc.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        pc.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        pc.put(ProducerConfig.BATCH_SIZE_CONFIG, 16_384);
        pc.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 256 * 1024L);
        List<Long> ackNanos = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Exception> error = new AtomicReference<>();
        long sent = 0;
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(pc, new ByteArraySerializer(), new ByteArraySerializer())) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WINDOW_S);
            byte[] value = new byte[1024];
            while (System.nanoTime() < end) {
                p.send(new ProducerRecord<>(GOOD, 0, null, value), (m, e) -> {
                    if (e != null) {
                        error.compareAndSet(null, e);
                    } else {
                        ackNanos.add(System.nanoTime());
                    }
                });
                sent++;
            }
            p.flush();
        } finally {
            stop.set(true);
            hostile.shutdown();
            hostile.awaitTermination(30, TimeUnit.SECONDS);
        }
        assertEquals(null, error.get(), "every record of the good producer acknowledged");
        assertEquals(sent, ackNanos.size());
        List<Long> gaps = new ArrayList<>();
        List<Long> acks = new ArrayList<>(ackNanos);
        Collections.sort(acks);
        for (int i = 1; i < acks.size(); i++) {
            long gap = TimeUnit.NANOSECONDS.toMillis(acks.get(i) - acks.get(i - 1));
            if (gap > 0) { // records of one batch are acknowledged together
                gaps.add(gap);
            }
        }
        Collections.sort(gaps);
        long longest = gaps.isEmpty() ? 0 : gaps.get(gaps.size() - 1);
        long p99 = gaps.isEmpty() ? 0 : gaps.get((int) Math.min(gaps.size() - 1, Math.ceil(gaps.size() * 0.99) - 1));
        long median = gaps.isEmpty() ? 0 : gaps.get(gaps.size() / 2);
        return new Result(acks.size(), longest, p99, median, hostileConnections.get());
    }
}
