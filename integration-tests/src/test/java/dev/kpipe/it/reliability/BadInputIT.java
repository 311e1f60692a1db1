// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Bad input on the wire gets the same answer from a kpipe broker as from a stock one (same Kafka distribution, plugin
 * not installed), both running side by side: truncated frames, size prefixes beyond {@code socket.request.max.bytes},
 * negative and zero sizes, unknown API keys, unsupported and removed versions, garbage and truncated bodies, and each
 * of those in the middle of a pipeline of produce requests (where kpipe has already read ahead), plus seeded random
 * frames. Each input goes to a fresh connection on each broker; what the client observes is compared: every
 * response frame (produce responses byte for byte, others by correlation id, API and error codes), then whether the
 * broker closed the connection. Both clusters have 2 nodes whose follower delays its fetches by up to {@value
 * #WINDOW_MS} ms, so a pipeline's acks=all produces are still unanswered when kpipe reads the bad request behind them.
 *
 * <p>Where the broker's selector itself ends a pipelined connection on reading (a size prefix out of range, or the
 * client's FIN), kpipe has read ahead and takes the close over until every earlier response is written, so those
 * inputs too must be answered exactly as on stock ({@code ConnectionEdgesIT} covers these edges on their own).
 *
 * <p>Meanwhile a pipelined idempotent producer keeps producing to each broker and must see no error; afterwards kpipe
 * holds no state (every live-state gauge back to 0) and caught no fault.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputIT {

    /** {@code socket.request.max.bytes} of both brokers (Kafka's default is 100 MiB). */
    private static final int MAX_REQUEST_BYTES = 1 << 20;

    private static final String TOPIC = "bad-input";
    private static final String STEADY = "steady";
    /** How long a connection that got no more bytes counts as left open by the broker. */
    private static final Duration QUIET = Duration.ofMillis(600);

    static final int WINDOW_MS = 30;
    private static final int FUZZ_INPUTS = Integer.getInteger("kpipe.it.badinput.fuzz", 60);
    private static final long FUZZ_SEED = Long.getLong("kpipe.it.badinput.seed", 6);

    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private Cluster stock;
    private Cluster kpipe;

    /** What the client does after writing its bytes. */
    private enum End {
        /** Keeps the connection open and reads until the broker closes it or stays quiet for {@link #QUIET}. */
        KEEP_OPEN,
        /** Shuts down its writing side (FIN), then reads as for KEEP_OPEN. */
        HALF_CLOSE
    }

    /**
     * One bad input: what to write on a fresh connection, the APIs of the requests whose answers are parsed, and
     * whether the broker's selector ends the connection on reading it after kpipe has read ahead (counted apart).
     */
    private record Input(
            String name,
            List<byte[]> writes,
            Map<Integer, ApiKeys> apis,
            Map<Integer, Short> versions,
            End end,
            boolean selectorClose) {}

    /** What the client saw: the response frames (normalized, see {@link #describe}) and how the connection ended. */
    private record Outcome(List<String> frames, String end) {}

    @BeforeAll
    void startBrokers() throws Exception {
        Future<Cluster> s = pool.submit(() ->
                Cluster.start(spec("BadInputIT-stock").installPlugin(false).build()));
        Future<Cluster> k =
                pool.submit(() -> Cluster.start(spec("BadInputIT-kpipe").build()));
        try {
            stock = s.get();
        } finally {
            kpipe = k.get();
        }
        for (Cluster c : List.of(stock, kpipe)) {
            c.createTopics(
                    List.of(
                            new NewTopic(TOPIC, Map.of(0, List.of(1, 2))).configs(Map.of("min.insync.replicas", "2")),
                            new NewTopic(STEADY, Map.of(0, List.of(1)))),
                    Duration.ofSeconds(60));
        }
    }

    private static ClusterSpec.Builder spec(String name) {
        return ClusterSpec.builder()
                .name(name)
                .nodes(2)
                .brokerConfig("socket.request.max.bytes", Integer.toString(MAX_REQUEST_BYTES))
                .nodeConfig(2, "replica.fetch.min.bytes", "1000000000")
                .nodeConfig(2, "replica.fetch.wait.max.ms", Integer.toString(WINDOW_MS));
    }

    @AfterAll
    void stopBrokers() {
        pool.shutdownNow();
        for (Cluster c : Arrays.asList(kpipe, stock)) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void badInputGetsTheStockAnswerAndLeavesNoKpipeState() throws Exception {
        List<Input> inputs = new ArrayList<>(fixedInputs());
        inputs.addAll(fuzzInputs(new Random(FUZZ_SEED), FUZZ_INPUTS));
        KafkaNode kpipeNode = kpipe.node(1);
        double upgradesBefore = KpipeJmx.kpipe(kpipeNode, "upgrade-total");
        double deferredBefore = KpipeJmx.kpipe(kpipeNode, "deferred-close-total");

        List<String> differences = new ArrayList<>();
        int selectorCloses = 0;
        Map<String, Integer> endings = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        try (SteadyProducer stockProducer = new SteadyProducer("stock", stock.clientConfig(), STEADY);
                SteadyProducer kpipeProducer = new SteadyProducer("kpipe", kpipe.clientConfig(), STEADY)) {
            long ackedBefore = kpipeProducer.acked();
            for (Input in : inputs) {
                Future<Outcome> onStock = pool.submit(() -> run(stock.node(1), in));
                Future<Outcome> onKpipe = pool.submit(() -> run(kpipeNode, in));
                Outcome s = onStock.get();
                Outcome k = onKpipe.get();
                endings.merge(s.end() + " after " + s.frames().size() + " response(s)", 1, Integer::sum);
                if (in.selectorClose()) {
                    selectorCloses++;
                }
                if (!s.equals(k)) {
                    differences.add(in.name() + (in.selectorClose() ? " (selector close)" : "") + ":\n    stock " + s
                            + "\n    kpipe " + k);
                }
            }
            assertTrue(kpipeProducer.acked() > ackedBefore, "the pipelined producer kept getting acks during the run");
            long stockRecords = stockProducer.stopAndVerify();
            long kpipeRecords = kpipeProducer.stopAndVerify();
            System.out.printf(
                    "BadInputIT: %d bad inputs tried (%d fixed, %d random, seed %d) on a stock and a kpipe"
                            + " broker in %d ms, each compared exactly (%d ended by the selector after a pipeline); outcomes on"
                            + " stock: %s; differences: %d; closes kpipe"
                            + " deferred until earlier responses were written: %.0f; concurrent pipelined producers stored %d"
                            + " (stock) and %d (kpipe) records, each once, in order%n",
                    inputs.size(),
                    inputs.size() - FUZZ_INPUTS,
                    FUZZ_INPUTS,
                    FUZZ_SEED,
                    (System.nanoTime() - t0) / 1_000_000,
                    selectorCloses,
                    endings,
                    differences.size(),
                    KpipeJmx.kpipe(kpipeNode, "deferred-close-total") - deferredBefore,
                    stockRecords,
                    kpipeRecords);
        }
        assertEquals("", String.join("\n", differences), "inputs answered differently by kpipe and stock Kafka");
        assertTrue(
                KpipeJmx.kpipe(kpipeNode, "upgrade-total") > upgradesBefore,
                "the pipelines in the inputs were pipelined by kpipe");
        assertTrue(
                KpipeJmx.kpipe(kpipeNode, "deferred-close-total") > deferredBefore,
                "kpipe met refused requests it had read ahead of unanswered ones");
        long ms = KpipeGauges.awaitAllZero(kpipeNode, Duration.ofSeconds(30));
        System.out.printf("BadInputIT: kpipe live-state gauges back to 0 within %d ms%n", ms);
        assertEquals(0.0, KpipeJmx.kpipe(kpipeNode, "plugin-fault-total"), "faults caught in kpipe");
        for (Cluster c : List.of(stock, kpipe)) {
            assertTrue(c.node(1).isRunning(), "broker still running");
        }
    }

    // ------------------------------------------------------------------ running one input

    private static Outcome run(KafkaNode node, Input in) throws IOException {
        List<String> frames = new ArrayList<>();
        String end;
        try (RawKafkaConnection conn = new RawKafkaConnection("127.0.0.1", node.port(), "bad-input", QUIET)) {
            try {
                for (byte[] w : in.writes()) {
                    conn.sendRaw(w);
                }
                if (in.end() == End.HALF_CLOSE) {
                    conn.shutdownOutput();
                }
            } catch (SocketException e) {
                // the broker closed it while we were still writing; the reads below see the close
            }
            while (true) {
                try {
                    frames.add(describe(in, conn.receiveFrame()));
                } catch (EOFException | SocketException e) {
                    end = "closed";
                    break;
                } catch (SocketTimeoutException e) {
                    end = "open";
                    break;
                }
            }
        }
        return new Outcome(frames, end);
    }

    /**
     * A response frame as compared: PRODUCE responses byte for byte (offsets included: both brokers saw the same
     * produce requests in the same order); responses that parse as the API and version of the request they answer as
     * correlation id, API and error counts (other fields hold broker-specific data such as feature epochs); anything
     * else (an API_VERSIONS error answered in v0) byte for byte.
     */
    private static String describe(Input in, byte[] frame) {
        int correlationId = ByteBuffer.wrap(frame).getInt();
        ApiKeys api = in.apis().get(correlationId);
        if (api != null && api != ApiKeys.PRODUCE) {
            short version = in.versions().get(correlationId);
            try {
                ByteBuffer buf = ByteBuffer.wrap(frame);
                ResponseHeader.parse(buf, api.responseHeaderVersion(version));
                AbstractResponse r = AbstractResponse.parseResponse(api, new ByteBufferAccessor(buf), version);
                if (!buf.hasRemaining()) {
                    return correlationId + ":" + api + ":" + r.errorCounts();
                }
            } catch (RuntimeException e) {
                // not in the request's version (e.g. API_VERSIONS answers an unsupported version in v0): bytes
            }
        }
        return correlationId + ":" + (api == null ? "?" : api.name()) + ":"
                + HexFormat.of().formatHex(frame);
    }

    // ------------------------------------------------------------------ the inputs

    /** Builds one input. */
    private static final class Builder {
        private final String name;
        private final List<byte[]> writes = new ArrayList<>();
        private final Map<Integer, ApiKeys> apis = new LinkedHashMap<>();
        private final Map<Integer, Short> versions = new LinkedHashMap<>();
        private int nextCorrelationId = 1000;
        private int produced;
        private boolean selectorClose;

        Builder(String name) {
            this.name = name;
        }

        Builder request(AbstractRequest r) {
            int id = nextCorrelationId++;
            apis.put(id, r.apiKey());
            versions.put(id, r.version());
            writes.add(WireInputs.frame(r, id, "bad-input"));
            return this;
        }

        /** A valid PRODUCE v12 of one record to {@link #TOPIC} (upgrades a kpipe connection to pipelined). */
        Builder produce(int acks) {
            return request(WireInputs.produce(TOPIC, 0, (short) acks, name + "#" + produced++));
        }

        Builder produces(int count, int acks) {
            for (int i = 0; i < count; i++) {
                produce(acks);
            }
            return this;
        }

        Builder raw(byte[] bytes) {
            writes.add(bytes);
            return this;
        }

        /** The selector ends the connection on reading what follows (size out of range, FIN) after a pipeline. */
        Builder selectorClose() {
            selectorClose = produced > 0;
            return this;
        }

        /** A frame with this header and body; the response (if any) is compared by bytes unless {@code api} parses it. */
        Builder frame(short apiKey, short version, byte[] body) {
            int id = nextCorrelationId++;
            ApiKeys api = ApiKeys.hasId(apiKey) ? ApiKeys.forId(apiKey) : null;
            boolean flexible =
                    api != null && api.isVersionSupported(version) && WireInputs.flexibleHeader(api, version);
            if (api != null) {
                apis.put(id, api);
                versions.put(id, version);
            }
            writes.add(WireInputs.frame(WireInputs.header(apiKey, version, id, "bad-input", flexible), body));
            return this;
        }

        Input end(End end) {
            return new Input(name, List.copyOf(writes), Map.copyOf(apis), Map.copyOf(versions), end, selectorClose);
        }

        Input open() {
            return end(End.KEEP_OPEN);
        }

        Input halfClose() {
            return end(End.HALF_CLOSE);
        }
    }

    private static Builder input(String name) {
        return new Builder(name);
    }

    private static byte[] garbage(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** The first {@code keep} bytes of a valid produce frame whose size prefix announces the whole frame. */
    private static byte[] truncatedProduce(int keep) {
        byte[] whole = WireInputs.frame(WireInputs.produce(TOPIC, 0, (short) 1, "truncated"), 4242, "bad-input");
        return Arrays.copyOf(whole, keep);
    }

    private static byte[] sizeOnly(int size) {
        return ByteBuffer.allocate(4).putInt(size).array();
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    private static List<Input> fixedInputs() {
        short produce = ApiKeys.PRODUCE.id;
        short metadata = ApiKeys.METADATA.id;
        short apiVersions = ApiKeys.API_VERSIONS.id;
        short listOffsets = ApiKeys.LIST_OFFSETS.id;
        byte[] oversize = concat(sizeOnly(MAX_REQUEST_BYTES + 1), garbage(64, 1));
        List<Input> l = new ArrayList<>();
        // On a fresh connection.
        l.add(input("truncated frame, then FIN").raw(truncatedProduce(40)).halfClose());
        l.add(input("truncated frame, left open").raw(truncatedProduce(40)).open());
        l.add(input("truncated size prefix, then FIN").raw(new byte[] {0, 0}).halfClose());
        l.add(input("size prefix socket.request.max.bytes + 1").raw(oversize).open());
        l.add(input("size prefix Integer.MAX_VALUE")
                .raw(concat(sizeOnly(Integer.MAX_VALUE), garbage(16, 2)))
                .open());
        l.add(input("negative size prefix")
                .raw(concat(sizeOnly(-1), garbage(16, 3)))
                .open());
        l.add(input("zero size prefix").raw(sizeOnly(0)).open());
        l.add(input("size prefix shorter than a header")
                .raw(WireInputs.sizePrefixed(new byte[] {0, 0, 0}))
                .open());
        l.add(input("unknown API key 9999")
                .frame((short) 9999, (short) 0, garbage(8, 4))
                .open());
        l.add(input("unknown API key -1")
                .frame((short) -1, (short) 0, new byte[0])
                .open());
        l.add(input("unsupported version PRODUCE v99")
                .frame(produce, (short) 99, garbage(32, 5))
                .open());
        l.add(input("removed version PRODUCE v0")
                .frame(produce, (short) 0, garbage(32, 6))
                .open());
        l.add(input("unsupported version METADATA v99")
                .frame(metadata, (short) 99, new byte[0])
                .open());
        l.add(input("unsupported version API_VERSIONS v99")
                .frame(apiVersions, (short) 99, new byte[0])
                .open());
        l.add(input("garbage body PRODUCE v12")
                .frame(produce, (short) 12, garbage(48, 7))
                .open());
        l.add(input("empty body PRODUCE v12")
                .frame(produce, (short) 12, new byte[0])
                .open());
        l.add(input("garbage body METADATA v12")
                .frame(metadata, (short) 12, garbage(48, 8))
                .open());
        l.add(input("garbage body API_VERSIONS v3")
                .frame(apiVersions, (short) 3, garbage(48, 9))
                .open());
        l.add(input("garbage body LIST_OFFSETS v9")
                .frame(listOffsets, (short) 9, garbage(48, 10))
                .open());
        l.add(input("client id longer than the frame")
                .raw(WireInputs.sizePrefixed(ByteBuffer.allocate(10)
                        .putShort(produce)
                        .putShort((short) 12)
                        .putInt(7)
                        .putShort((short) 500)
                        .array()))
                .open());
        l.add(input("produce with trailing bytes after its body")
                .raw(trailingBytesProduce())
                .open());
        // In the middle of a pipeline: kpipe has upgraded the connection and reads ahead.
        l.add(input("pipeline acks=1 x2, garbage body, acks=1")
                .produces(2, 1)
                .frame(produce, (short) 12, garbage(48, 11))
                .produce(1)
                .open());
        l.add(input("pipeline acks=all, acks=1, garbage body, acks=1")
                .produce(-1)
                .produce(1)
                .frame(produce, (short) 12, garbage(48, 22))
                .produce(1)
                .open());
        l.add(input("pipeline acks=all x2, garbage body, acks=all")
                .produces(2, -1)
                .frame(produce, (short) 12, garbage(48, 12))
                .produce(-1)
                .open());
        l.add(input("pipeline acks=all x5, garbage body")
                .produces(5, -1)
                .frame(produce, (short) 12, garbage(64, 13))
                .open());
        l.add(input("pipeline acks=0 x2, acks=all, garbage body")
                .produces(2, 0)
                .produce(-1)
                .frame(produce, (short) 12, garbage(48, 14))
                .open());
        l.add(input("pipeline acks=all x2, unknown API key, acks=all")
                .produces(2, -1)
                .frame((short) 9999, (short) 0, garbage(8, 15))
                .produce(-1)
                .open());
        l.add(input("pipeline acks=all x2, unsupported version")
                .produces(2, -1)
                .frame(produce, (short) 99, garbage(32, 16))
                .open());
        l.add(input("pipeline acks=all, removed version, acks=1")
                .produce(-1)
                .frame(produce, (short) 1, garbage(32, 17))
                .produce(1)
                .open());
        l.add(input("pipeline acks=all x2, API_VERSIONS v99, acks=1")
                .produces(2, -1)
                .frame(apiVersions, (short) 99, new byte[0])
                .produce(1)
                .open());
        l.add(input("pipeline acks=all x2, garbage LIST_OFFSETS")
                .produces(2, -1)
                .frame(listOffsets, (short) 9, garbage(40, 18))
                .open());
        l.add(input("pipeline acks=all x2, METADATA v99")
                .produces(2, -1)
                .frame(metadata, (short) 99, new byte[0])
                .open());
        l.add(input("pipeline acks=all x2, size prefix beyond the maximum")
                .produces(2, -1)
                .selectorClose()
                .raw(oversize)
                .open());
        l.add(input("pipeline acks=all x2, negative size prefix")
                .produces(2, -1)
                .selectorClose()
                .raw(concat(sizeOnly(-7), garbage(8, 19)))
                .open());
        l.add(input("pipeline acks=all x2, truncated frame, then FIN")
                .produces(2, -1)
                .selectorClose()
                .raw(truncatedProduce(50))
                .halfClose());
        l.add(input("pipeline acks=all x2, then FIN")
                .produces(2, -1)
                .selectorClose()
                .halfClose());
        l.add(input("pipeline acks=all x2, truncated frame, left open")
                .produces(2, -1)
                .raw(truncatedProduce(50))
                .open());
        l.add(input("pipeline acks=all x2, valid API_VERSIONS, garbage body")
                .produces(2, -1)
                .request(new ApiVersionsRequest.Builder().build((short) 3))
                .frame(produce, (short) 12, garbage(48, 20))
                .open());
        return l;
    }

    private static byte[] trailingBytesProduce() {
        byte[] valid = WireInputs.frame(WireInputs.produce(TOPIC, 0, (short) 1, "trailing"), 4343, "bad-input");
        byte[] body = Arrays.copyOfRange(valid, 4, valid.length);
        return WireInputs.sizePrefixed(concat(body, garbage(8, 21)));
    }

    /**
     * Seeded random inputs: random frames, valid headers of a few APIs (versions in and out of range) with random
     * bodies, random size prefixes with random tails, each on its own or after 1 to 3 valid produce requests (a
     * pipeline on kpipe). Most inputs on a fresh connection end with a FIN (the broker then closes promptly). APIs
     * whose answers hold broker addresses (METADATA, FIND_COORDINATOR, DESCRIBE_CLUSTER) or that change the cluster
     * are not drawn.
     */
    private static List<Input> fuzzInputs(Random random, int count) {
        short[] apis = {
            ApiKeys.PRODUCE.id,
            ApiKeys.LIST_OFFSETS.id,
            ApiKeys.API_VERSIONS.id,
            ApiKeys.SASL_HANDSHAKE.id,
            ApiKeys.DESCRIBE_ACLS.id
        };
        List<Input> l = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int pipelined = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(3);
            Builder b = input("random #" + i + " after " + pipelined + " produce(s)");
            for (int p = 0; p < pipelined; p++) {
                b.produce(random.nextBoolean() ? 1 : (random.nextInt(4) == 0 ? 0 : -1));
            }
            switch (random.nextInt(3)) {
                case 0 -> b.raw(WireInputs.sizePrefixed(garbage(random.nextInt(40), random.nextLong())));
                case 1 -> {
                    short api = apis[random.nextInt(apis.length)];
                    ApiKeys k = ApiKeys.forId(api);
                    short version =
                            (short) (k.oldestVersion() - 1 + random.nextInt(k.latestVersion() - k.oldestVersion() + 3));
                    b.frame(api, version, garbage(random.nextInt(48), random.nextLong()));
                }
                default -> {
                    int size = random.nextInt(200) - 20;
                    if (size < 0) {
                        b.selectorClose();
                    }
                    b.raw(concat(sizeOnly(size), garbage(random.nextInt(24), random.nextLong())));
                }
            }
            // after a pipeline a FIN would be a selector close too; fresh connections end either way
            l.add(pipelined > 0 || random.nextInt(5) == 0 ? b.open() : b.halfClose());
        }
        return l;
    }
}
