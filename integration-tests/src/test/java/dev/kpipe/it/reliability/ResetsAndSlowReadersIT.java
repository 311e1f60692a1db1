// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.reliability.ConnectionEdgesIT.Break;
import dev.kpipe.it.reliability.ConnectionEdgesIT.Encoded;
import dev.kpipe.it.reliability.ConnectionEdgesIT.Op;
import dev.kpipe.it.reliability.ConnectionEdgesIT.Outcome;
import dev.kpipe.it.reliability.ConnectionEdgesIT.Stream;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Differential tests of two more ends of a pipelined connection, on the cluster pair of {@link ConnectionEdgesIT} (a
 * stock and a kpipe 2-node cluster whose follower delays its fetches by up to {@value ConnectionEdgesIT#WINDOW_MS}
 * ms, started side by side here):
 *
 * <ul>
 *   <li><b>Resets mid-pipeline</b>: a pipeline written in one go, the first {@code k} responses read, then an RST
 *       ({@code SO_LINGER} 0) with requests still in flight. Stock reads one request at a time, so how many it
 *       appended depends on when the RST arrives, except when only the last request, an acks=all produce, is
 *       unanswered: stock has read every request, and both brokers must hold every record. For every stream, on both
 *       brokers: each record is stored once, the records of a stream are those of its first {@code m} produces (none
 *       of a request after one that was not appended), at least those whose responses the client read; after each
 *       reset a fresh connection's pipeline is answered in order without error.</li>
 *   <li><b>Slow readers</b>: a pipeline with METADATA requests whose responses are about 35 KB each, read by a
 *       client with a 4 KiB {@code SO_RCVBUF} {@value #READ_CHUNK} bytes per read: both brokers answer every request,
 *       in order, with the same correlation ids and error codes, and end the connection the same way.</li>
 * </ul>
 * Afterwards kpipe caught no fault and its live-state gauges ({@link KpipeGauges#LIVE_STATE}: in-flight requests and
 * bytes, held responses, budget) are back to 0.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ResetsAndSlowReadersIT {

    static final long RESET_SEED = 3131;
    static final int RESET_TRIES = 12;
    static final long SLOW_SEED = 5757;
    static final int SLOW_TRIES = 4;
    /** Bytes the slow reader asks for per read; it pauses 1 ms every {@value #READS_PER_PAUSE} reads. */
    static final int READ_CHUNK = 8;

    static final int READS_PER_PAUSE = 16;
    private static final int SLOW_RCVBUF = 4096;
    private static final Duration QUIET = Duration.ofSeconds(5);
    /** Stream indexes (in record values) of the fresh connections after each reset, and of the slow readers. */
    private static final int HEALTH_BASE = 1000;

    private static final int SLOW_BASE = 2000;

    private final ExecutorService pool = Executors.newFixedThreadPool(4);
    private StockAndKpipe clusters;
    private Cluster stock;
    private Cluster kpipe;

    /** A pipeline then an RST after reading the first {@code readFirst} responses. */
    record Reset(List<Op> ops, int readFirst) {
        int answered() {
            return (int) ops.stream().filter(o -> o != Op.PRODUCE_ACKS_0).count();
        }

        /** Stock has read every request: all but the last, an acks=all produce, are answered. */
        boolean deterministic() {
            return ops.get(ops.size() - 1) == Op.PRODUCE_ACKS_ALL && readFirst == answered() - 1;
        }

        /** @return the correlation ids of the produces, in order */
        List<Integer> produceIds() {
            return IntStream.range(0, ops.size())
                    .filter(i -> ops.get(i).name().startsWith("PRODUCE"))
                    .mapToObj(i -> 1000 + i)
                    .toList();
        }
    }

    @BeforeAll
    void startBrokers() throws Exception {
        clusters = StockAndKpipe.start(pool, "ResetsAndSlowReadersIT", ConnectionEdgesIT::spec);
        stock = clusters.stock();
        kpipe = clusters.kpipe();
        ConnectionEdgesIT.createTopic(stock);
        ConnectionEdgesIT.createTopic(kpipe);
    }

    @AfterAll
    void stopBrokers() {
        pool.shutdownNow();
        if (clusters != null) {
            clusters.close();
        }
    }

    @Test
    void resetsMidPipelineLeaveBothBrokersHealthy() throws Exception {
        List<Reset> resets = new ArrayList<>();
        List<Op> twelve = Collections.nCopies(12, Op.PRODUCE_ACKS_ALL);
        resets.add(new Reset(twelve, 0));
        resets.add(new Reset(twelve, 5));
        resets.add(new Reset(twelve, 11));
        resets.add(new Reset(List.of(Op.PRODUCE_ACKS_1, Op.METADATA, Op.PRODUCE_ACKS_0, Op.PRODUCE_ACKS_ALL), 2));
        SplittableRandom random = new SplittableRandom(RESET_SEED);
        for (Stream s : ConnectionEdgesIT.mix(RESET_SEED, RESET_TRIES)) {
            Reset r = new Reset(s.ops(), 0);
            resets.add(new Reset(s.ops(), random.nextInt(r.answered() + 1)));
        }
        Stream health = new Stream(
                List.of(Op.PRODUCE_ACKS_1, Op.METADATA, Op.PRODUCE_ACKS_ALL, Op.API_VERSIONS), Break.HALF_CLOSE);
        KafkaNode kpipeNode = kpipe.node(1);
        double upgradesBefore = KpipeJmx.kpipe(kpipeNode, "upgrade-total");
        long t0 = System.nanoTime();
        Outcome expectedHealth = null;
        for (int i = 0; i < resets.size(); i++) {
            Reset reset = resets.get(i);
            int n = i;
            List<Outcome> both = clusters.onBoth(pool, node -> resetThenCheck(node, reset, n, health));
            Outcome s = both.get(0);
            Outcome k = both.get(1);
            if (expectedHealth == null) {
                expectedHealth = s;
                assertEquals(4, s.responses().size(), "the pipeline after a reset is answered: " + s);
                assertTrue(
                        s.responses().stream().allMatch(d -> d.matches("\\d+:\\w+:\\{NONE=\\d+}")),
                        "without error: " + s);
            }
            assertEquals(expectedHealth, s, "stock answers the pipeline after reset #" + i + " " + reset);
            assertEquals(expectedHealth, k, "kpipe answers the pipeline after reset #" + i + " " + reset);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        Map<Integer, List<Integer>> onStock = appended(stock);
        Map<Integer, List<Integer>> onKpipe = appended(kpipe);
        Map<String, String> counts = new TreeMap<>();
        int deterministic = 0;
        for (int i = 0; i < resets.size(); i++) {
            Reset reset = resets.get(i);
            int m = checkPrefix("stock", reset, onStock.getOrDefault(i, List.of()));
            int mk = checkPrefix("kpipe", reset, onKpipe.getOrDefault(i, List.of()));
            counts.put(
                    String.format("#%02d", i),
                    reset.produceIds().size() + " produced, read " + reset.readFirst() + ": stock " + m + ", kpipe "
                            + mk);
            if (reset.deterministic()) {
                deterministic++;
                assertEquals(reset.produceIds().size(), m, "stock read every request of #" + i + " " + reset);
                assertEquals(m, mk, "the same records on both brokers for #" + i + " " + reset);
            }
        }
        for (int i = 0; i < resets.size(); i++) {
            List<Integer> ids = List.of(1000, 1002);
            assertEquals(ids, onStock.get(HEALTH_BASE + i), "fresh connection's records on stock after #" + i);
            assertEquals(ids, onKpipe.get(HEALTH_BASE + i), "fresh connection's records on kpipe after #" + i);
        }
        System.out.printf(
                "ResetsAndSlowReadersIT: %d resets (%d fixed, %d generated, seed %d; %d where stock is deterministic)"
                        + " on a stock and a kpipe broker in %d ms; records appended per stream: %s%n",
                resets.size(), resets.size() - RESET_TRIES, RESET_TRIES, RESET_SEED, deterministic, ms, counts);
        assertTrue(deterministic >= 1, "at least one stream where stock's count is deterministic");
        assertTrue(KpipeJmx.kpipe(kpipeNode, "upgrade-total") > upgradesBefore, "kpipe pipelined the connections");
        assertKpipeReleased(kpipeNode);
    }

    /** Writes the reset's pipeline, reads {@code readFirst} responses, resets; then runs {@code health} fresh. */
    private static Outcome resetThenCheck(KafkaNode node, Reset reset, int index, Stream health) throws Exception {
        Encoded e = ConnectionEdgesIT.encode(
                new Stream(reset.ops(), Break.HALF_CLOSE), index, List.of(ConnectionEdgesIT.TOPIC));
        RawKafkaConnection conn = new RawKafkaConnection("127.0.0.1", node.port(), "resets", Duration.ofSeconds(30));
        try {
            conn.sendRaw(e.bytes()); // back to back, one write; HALF_CLOSE adds no bytes and is not done
            for (int i = 0; i < reset.readFirst(); i++) {
                WireInputs.describe(conn.receiveFrame(), e.apis(), e.versions());
            }
        } finally {
            conn.abort();
        }
        return ConnectionEdgesIT.run(node, health, HEALTH_BASE + index);
    }

    /**
     * @return the number of produces appended, after checking that they are the stream's first ones, each once, and
     *     at least those answered before the reset
     */
    private static int checkPrefix(String side, Reset reset, List<Integer> appended) {
        List<Integer> ids = reset.produceIds();
        List<Integer> sorted = appended.stream().sorted().toList();
        assertEquals(
                ids.subList(0, Math.min(sorted.size(), ids.size())),
                sorted,
                side + ": each record once, and only of the first produces, for " + reset);
        long producesRead = reset.ops().stream()
                .limit(answeredPrefix(reset))
                .filter(o -> o.name().startsWith("PRODUCE"))
                .count();
        assertTrue(sorted.size() >= producesRead, side + ": every acknowledged produce stored, for " + reset);
        return sorted.size();
    }

    /** @return how many ops precede the first unread response (acks=0 produces before it included) */
    private static int answeredPrefix(Reset reset) {
        int read = 0;
        for (int i = 0; i < reset.ops().size(); i++) {
            if (reset.ops().get(i) != Op.PRODUCE_ACKS_0 && read++ == reset.readFirst()) {
                return i;
            }
        }
        return reset.ops().size();
    }

    /** @return per stream index, the correlation ids of its records as stored, in offset order */
    private static Map<Integer, List<Integer>> appended(Cluster c) {
        Map<Integer, List<Integer>> m = new HashMap<>();
        RecordReadBack.readToEnd(
                c,
                ConnectionEdgesIT.TOPIC,
                new StringDeserializer(),
                new StringDeserializer(),
                Duration.ofSeconds(60),
                r -> {
                    String[] parts = r.value().split("[ #]+"); // "stream <index> #<correlation id>"
                    m.computeIfAbsent(Integer.parseInt(parts[1]), x -> new ArrayList<>())
                            .add(Integer.parseInt(parts[2]));
                });
        return m;
    }

    @Test
    void slowReadersGetEveryResponseAsOnStock() throws Exception {
        List<Stream> streams = new ArrayList<>();
        List<Op> big = List.of(
                Op.PRODUCE_ACKS_ALL,
                Op.METADATA,
                Op.PRODUCE_ACKS_1,
                Op.METADATA,
                Op.PRODUCE_ACKS_ALL,
                Op.API_VERSIONS,
                Op.METADATA,
                Op.PRODUCE_ACKS_1);
        streams.add(new Stream(big, Break.HALF_CLOSE));
        streams.add(new Stream(big, Break.SIZE_MINUS_ONE));
        streams.add(new Stream(big, Break.TRUNCATED_THEN_HALF_CLOSE));
        streams.addAll(ConnectionEdgesIT.mix(SLOW_SEED, SLOW_TRIES));
        List<String> unknown = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            unknown.add("no-such-topic-" + i + "-" + "x".repeat(100));
        }
        KafkaNode kpipeNode = kpipe.node(1);
        long t0 = System.nanoTime();
        List<String> differences = new ArrayList<>();
        Map<String, Integer> endings = new TreeMap<>();
        for (int i = 0; i < streams.size(); i++) {
            Stream stream = streams.get(i);
            Encoded e = ConnectionEdgesIT.encode(stream, SLOW_BASE + i, unknown);
            List<Outcome> both = clusters.onBoth(pool, node -> readSlowly(node, e));
            Outcome s = both.get(0);
            Outcome k = both.get(1);
            endings.merge(
                    stream.end() + ": " + s.end() + " after " + s.responses().size(), 1, Integer::sum);
            assertEquals(e.apis().size(), s.responses().size(), "stock answers every request of " + stream);
            if (!s.equals(k)) {
                differences.add("#" + i + " " + stream + ":\n    stock " + s + "\n    kpipe " + k);
            }
        }
        System.out.printf(
                "ResetsAndSlowReadersIT: %d slow-reader streams (%d generated, seed %d, %d B reads, %d B SO_RCVBUF) on"
                        + " a stock and a kpipe broker in %d ms; endings on stock: %s; differences: %d%n",
                streams.size(),
                SLOW_TRIES,
                SLOW_SEED,
                READ_CHUNK,
                SLOW_RCVBUF,
                (System.nanoTime() - t0) / 1_000_000,
                endings,
                differences.size());
        assertEquals("", String.join("\n", differences), "slow readers answered differently by kpipe and stock");
        assertKpipeReleased(kpipeNode);
    }

    /**
     * Writes the stream from another thread (the broker may stop reading while the client does not read), then reads
     * the responses {@value #READ_CHUNK} bytes per read, pausing 1 ms every {@value #READS_PER_PAUSE} reads.
     */
    private Outcome readSlowly(KafkaNode node, Encoded e) throws Exception {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(SLOW_RCVBUF);
        socket.connect(new InetSocketAddress("127.0.0.1", node.port()), 10_000);
        socket.setSoTimeout((int) QUIET.toMillis());
        List<String> responses = new ArrayList<>();
        String end;
        try (socket) {
            Future<?> writer = pool.submit(() -> {
                socket.getOutputStream().write(e.bytes());
                if (e.halfClose()) {
                    socket.shutdownOutput();
                }
                return null;
            });
            DataInputStream in = new DataInputStream(new Trickle(socket.getInputStream()));
            while (true) {
                try {
                    byte[] frame = new byte[in.readInt()];
                    in.readFully(frame);
                    responses.add(WireInputs.describe(frame, e.apis(), e.versions()));
                } catch (EOFException | SocketException x) {
                    end = "closed";
                    break;
                } catch (SocketTimeoutException x) {
                    end = "open";
                    break;
                }
            }
            try {
                writer.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException x) {
                end += ", write failed"; // the broker closed before reading everything
            }
        }
        return new Outcome(responses, end);
    }

    /** An input stream that hands out at most {@value #READ_CHUNK} bytes per read, pausing now and then. */
    private static final class Trickle extends FilterInputStream {
        private int reads;

        Trickle(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (++reads % READS_PER_PAUSE == 0) {
                try {
                    TimeUnit.MILLISECONDS.sleep(1); // the pace of the slow reader, not a wait for a condition
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                }
            }
            return super.read(b, off, Math.min(len, READ_CHUNK));
        }
    }

    private static void assertKpipeReleased(KafkaNode kpipeNode) throws Exception {
        long zeroMs = KpipeGauges.awaitAllZero(kpipeNode, Duration.ofSeconds(30));
        System.out.printf("ResetsAndSlowReadersIT: kpipe live-state gauges back to 0 within %d ms%n", zeroMs);
        assertEquals(0.0, KpipeJmx.kpipe(kpipeNode, "plugin-fault-total"), "faults caught in kpipe");
    }
}
