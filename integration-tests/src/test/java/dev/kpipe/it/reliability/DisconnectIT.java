// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.junit.jupiter.api.Test;

/**
 * Clients that go away with requests in flight: {@value #EPISODES} connections, {@value #WORKERS} at a time, each
 * writes 1 to 5 requests back to back (the first a produce, which makes the connection pipelined; then a random mix
 * of PRODUCE acks=all / acks=1 / acks=0, METADATA and API_VERSIONS) with random pauses, reads none or some of the
 * responses, and closes at a random point: a normal close (FIN), an abort (RST), or in the middle of writing a further
 * request. The acks=all produces go to a partition whose follower delays its fetches by up to {@value #WINDOW_MS} ms,
 * so the broker still waits on them, and holds later responses behind them, when most clients leave.
 *
 * <p>Meanwhile a Java idempotent producer pipelines to the same broker; it must see no error, and every record it
 * sent must be stored once, in order. Afterwards a fresh producer round trip works, kpipe caught no fault, and every
 * gauge of live kpipe state ({@link KpipeGauges#LIVE_STATE}) returns to exactly 0 within a deadline.
 */
@KafkaCluster(
        nodes = 2,
        nodeConfig = {"2:replica.fetch.min.bytes=1000000000", "2:replica.fetch.wait.max.ms=" + DisconnectIT.WINDOW_MS})
class DisconnectIT {

    static final int WINDOW_MS = 40;
    private static final int EPISODES = Integer.getInteger("kpipe.it.disconnects", 1000);
    private static final int WORKERS = 8;
    private static final long SEED = Long.getLong("kpipe.it.disconnects.seed", 61);
    private static final String SLOW = "disconnect-slow"; // leader 1, follower 2: acks=all waits up to WINDOW_MS
    private static final String STEADY = "disconnect-steady";

    /** How a client leaves. */
    private enum Leave {
        /** {@code close()}: FIN. */
        CLOSE,
        /** {@code SO_LINGER} 0: RST. */
        ABORT,
        /** Writes part of one more request, then closes. */
        MID_FRAME
    }

    @Test
    void clientsLeavingWithRequestsInFlightLeaveNoKpipeStateBehind(Cluster cluster) throws Exception {
        cluster.createTopics(
                List.of(
                        new NewTopic(SLOW, Map.of(0, List.of(1, 2), 1, List.of(1, 2)))
                                .configs(Map.of("min.insync.replicas", "2")),
                        new NewTopic(STEADY, Map.of(0, List.of(1)))),
                Duration.ofSeconds(60));
        KafkaNode node = cluster.node(1);
        double upgradesBefore = KpipeJmx.kpipe(node, "upgrade-total");

        Map<String, Double> peaks = new ConcurrentHashMap<>();
        AtomicBoolean sampling = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> samplePeaks(node, peaks, sampling), "gauge-sampler");
        sampler.start();

        Stats stats = new Stats();
        long t0 = System.nanoTime();
        ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
        try (SteadyProducer steady = new SteadyProducer("during-disconnects", cluster.clientConfig(), STEADY)) {
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                done.add(workers.submit(() -> {
                    int episode;
                    while ((episode = next.getAndIncrement()) < EPISODES) {
                        episode(node.port(), new SplittableRandom(SEED * 1_000_003 + episode), stats);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES);
            }
            long elapsed = (System.nanoTime() - t0) / 1_000_000;
            sampling.set(false);
            sampler.join();
            long steadyRecords = steady.stopAndVerify();
            System.out.printf(
                    "DisconnectIT: %d connections closed with requests in flight in %d ms (%s); %d requests"
                            + " written, %d responses read, %d requests unanswered at close; peaks seen in kpipe's gauges"
                            + " during the run: %s; the concurrent pipelined producer stored %d records, each once, in order%n",
                    stats.episodes.sum(),
                    elapsed,
                    new TreeMap<>(stats.leaves),
                    stats.requests.sum(),
                    stats.responses.sum(),
                    stats.unanswered.sum(),
                    new TreeMap<>(peaks),
                    steadyRecords);
        } finally {
            sampling.set(false);
            workers.shutdownNow();
        }

        assertEquals(EPISODES, stats.episodes.sum(), "episodes run");
        assertTrue(stats.unanswered.sum() >= EPISODES, "most clients left with requests unanswered");
        double upgrades = KpipeJmx.kpipe(node, "upgrade-total") - upgradesBefore;
        System.out.printf("DisconnectIT: %.0f of %d client connections upgraded to pipelined%n", upgrades, EPISODES);
        assertTrue(upgrades > EPISODES / 2.0, "most client connections were pipelined by kpipe");
        assertTrue(
                KpipeJmx.kpipe(node, "inflight-requests-per-connection-max") >= 2,
                "kpipe had more than one request of a connection in flight");
        assertTrue(
                peaks.getOrDefault("held-responses", 0.0) > 0,
                "kpipe held responses behind slower ones while clients left (sampled peaks " + peaks + ")");

        // The broker keeps serving: a new producer's round trip.
        cluster.createTopic("disconnect-after", 1, 1);
        try (SteadyProducer after =
                new SteadyProducer("after-disconnects", cluster.clientConfig(), "disconnect-after")) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (after.acked() < 100 && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(10); // until the first acks arrive
            }
            after.stopAndVerify();
        }

        long ms = KpipeGauges.awaitAllZero(node, Duration.ofSeconds(30));
        System.out.printf(
                "DisconnectIT: every kpipe live-state gauge back to 0 within %d ms: %s; requests read in"
                        + " the poll in which their client reset the connection, dropped unanswered: %.0f%n",
                ms, KpipeGauges.read(node), KpipeJmx.kpipe(node, "orphaned-receive-total"));
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "faults caught in kpipe");
        assertEquals(
                List.of(),
                node.logLines().stream()
                        .filter(l -> l.contains("IllegalStateException") || l.contains("Uncaught exception"))
                        .toList(),
                "broker log");
    }

    /** Counters over all episodes. */
    private static final class Stats {
        final LongAdder episodes = new LongAdder();
        final LongAdder requests = new LongAdder();
        final LongAdder responses = new LongAdder();
        final LongAdder unanswered = new LongAdder();
        final Map<String, LongAdder> leaves = new ConcurrentHashMap<>();

        void left(Leave how, int inflight) {
            leaves.computeIfAbsent(how + " with " + inflight + " in flight", k -> new LongAdder())
                    .increment();
        }
    }

    /** One client: connect, write 1..5 requests, maybe read some answers, leave. */
    private static void episode(int port, SplittableRandom random, Stats stats) throws Exception {
        int count = 1 + random.nextInt(5);
        int expectingResponse = 0;
        int read = 0;
        Leave how = Leave.values()[random.nextInt(Leave.values().length)];
        RawKafkaConnection conn = new RawKafkaConnection("127.0.0.1", port, "disconnect", Duration.ofSeconds(30));
        try {
            for (int i = 0; i < count; i++) {
                AbstractRequest r = request(i == 0 ? random.nextInt(3) : random.nextInt(5), random);
                conn.send(random.nextInt(), r);
                stats.requests.increment();
                if (!(r instanceof ProduceRequest p && p.acks() == 0)) {
                    expectingResponse++;
                }
                pause(random, 3);
            }
            int toRead = random.nextInt(3) == 0 ? random.nextInt(expectingResponse + 1) : 0;
            toRead = Math.min(toRead, Math.max(0, expectingResponse - 1)); // leave at least one unanswered if any
            for (; read < toRead; read++) {
                conn.receiveFrame();
            }
            stats.responses.add(read);
            pause(random, WINDOW_MS + 10);
            if (how == Leave.MID_FRAME) {
                byte[] f = WireInputs.frame(WireInputs.produce(SLOW, 0, (short) 1, "cut"), 1, "disconnect");
                conn.sendRaw(Arrays.copyOf(f, 1 + random.nextInt(f.length - 1)));
            }
        } catch (SocketException e) {
            throw new AssertionError("the broker closed a client connection that did nothing wrong", e);
        } finally {
            stats.unanswered.add(expectingResponse - read);
            stats.left(how, expectingResponse - read);
            stats.episodes.increment();
            if (how == Leave.ABORT) {
                conn.abort();
            } else {
                conn.close();
            }
        }
    }

    /** 0: PRODUCE acks=all, 1: acks=1, 2: acks=0, 3: METADATA, 4: API_VERSIONS. */
    private static AbstractRequest request(int kind, SplittableRandom random) {
        int partition = random.nextInt(2);
        return switch (kind) {
            case 0 -> WireInputs.produce(SLOW, partition, (short) -1, "all");
            case 1 -> WireInputs.produce(SLOW, partition, (short) 1, "one");
            case 2 -> WireInputs.produce(SLOW, partition, (short) 0, "zero");
            case 3 -> WireInputs.metadata(List.of(SLOW));
            default -> new ApiVersionsRequest.Builder().build((short) 3);
        };
    }

    private static void pause(SplittableRandom random, int maxMs) throws InterruptedException {
        int ms = random.nextInt(maxMs + 1);
        if (ms > 0 && random.nextBoolean()) {
            TimeUnit.MILLISECONDS.sleep(ms); // the point at which the client acts next: random by design
        }
    }

    /** Records the highest value seen of the live-state gauges while {@code running}, every 20 ms. */
    private static void samplePeaks(KafkaNode node, Map<String, Double> peaks, AtomicBoolean running) {
        while (running.get()) {
            try {
                for (String g :
                        List.of("pipelined-connections", "inflight-requests", "held-responses", "inflight-bytes")) {
                    peaks.merge(g, KpipeJmx.kpipe(node, g), Math::max);
                }
                TimeUnit.MILLISECONDS.sleep(20); // sampling interval
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
