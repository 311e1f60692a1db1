// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.reliability.KpipeGauges;
import dev.kpipe.it.reliability.StockAndKpipe;
import dev.kpipe.it.reliability.WireInputs;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Differential test of SASL re-authentication (KIP-368) on pipelined connections: the same raw SCRAM-SHA-512 client
 * streams to a stock and a kpipe 1-node broker whose SASL listener has {@code connections.max.reauth.ms} {@value
 * #REAUTH_MS}, started side by side; per response its correlation id, API and error codes
 * ({@link WireInputs#describe}), then how the connection ended, must be the same on both.
 *
 * <ul>
 *   <li>A pipeline that crosses the session's expiry without re-authenticating: a produce, a METADATA, a FETCH that
 *       waits {@value #FETCH_WAIT_MS} ms (so it is answered after the session expired), then a produce, a METADATA
 *       and an API_VERSIONS. Stock reads the request after the FETCH only once it answered it, after the expiry, and
 *       closes the connection there (KIP-368: a request other than a handshake after the expiry closes it). FETCH
 *       is exclusive: kpipe drains the connection before it, so it too reads the produce after the expiry.</li>
 *   <li>A pipeline written after the session expired: closed at its first request, nothing answered or stored.</li>
 *   <li>A client that re-authenticates in the middle of a pipeline (a produce, a FETCH of 300 ms, a METADATA, then the
 *       handshake; the SCRAM exchange; then a pipeline of three produces and a METADATA): every response on both.</li>
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReauthenticationExpiryIT {

    static final int REAUTH_MS = 2000;
    static final int FETCH_WAIT_MS = REAUTH_MS + 1000;
    private static final String USER = "expiry-user";
    private static final String PASSWORD = "expiry-secret";
    private static final String TOPIC = "reauth-expiry";
    /** Never written: a FETCH of it waits its whole max wait. */
    private static final String IDLE = "reauth-idle";

    private static final short PRODUCE_VERSION = 9;
    private static final Duration QUIET = Duration.ofSeconds(5);

    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private StockAndKpipe clusters;

    /** What the client saw: the responses, as compared, and how the connection ended. */
    record Outcome(List<String> responses, String end) {}

    /** Requests to write back to back, correlation ids in order, and the API and version of each answered one. */
    private static final class Pipeline {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final Map<Integer, ApiKeys> apis = new LinkedHashMap<>();
        final Map<Integer, Short> versions = new LinkedHashMap<>();

        Pipeline add(int correlationId, AbstractRequest r) {
            apis.put(correlationId, r.apiKey());
            versions.put(correlationId, r.version());
            bytes.writeBytes(WireInputs.frame(r, correlationId, "reauth-expiry"));
            return this;
        }
    }

    @BeforeAll
    void startBrokers() throws Exception {
        clusters = StockAndKpipe.start(pool, "ReauthenticationExpiryIT", ReauthenticationExpiryIT::spec);
        for (Cluster c : List.of(clusters.stock(), clusters.kpipe())) {
            Scram.createUser(c, USER, PASSWORD, List.of(c.saslClientConfig(USER, PASSWORD)));
            c.createTopics(
                    List.of(new NewTopic(TOPIC, Map.of(0, List.of(1))), new NewTopic(IDLE, Map.of(0, List.of(1)))),
                    Duration.ofSeconds(60));
        }
    }

    private static ClusterSpec.Builder spec(String name) {
        return ClusterSpec.builder()
                .name(name)
                .nodes(1)
                .saslScramListener(true)
                .brokerConfig("connections.max.reauth.ms", Integer.toString(REAUTH_MS));
    }

    @AfterAll
    void stopBrokers() {
        pool.shutdownNow();
        if (clusters != null) {
            clusters.close();
        }
    }

    @Test
    void pipelinePastTheExpiryClosesWhereStockCloses() throws Exception {
        double[] before = kpipeCounters();
        Outcome[] both = onBoth(node -> {
            try (RawKafkaConnection conn = connect(node)) {
                assertEquals(REAUTH_MS, Scram.authenticate(conn, USER, PASSWORD, 1), "re-authentication is on");
                Pipeline p = new Pipeline()
                        .add(11, produce("crossing 11"))
                        .add(12, WireInputs.metadata(List.of(TOPIC)))
                        .add(13, fetch(FETCH_WAIT_MS))
                        .add(14, produce("crossing 14"))
                        .add(15, WireInputs.metadata(List.of(TOPIC)))
                        .add(16, new ApiVersionsRequest.Builder().build((short) 3));
                return writeAndRead(conn, p);
            }
        });
        System.out.printf("ReauthenticationExpiryIT: crossing the expiry: stock %s, kpipe %s%n", both[0], both[1]);
        assertEquals(3, both[0].responses().size(), "stock answers up to the FETCH answered after the expiry");
        assertEquals("closed", both[0].end());
        assertEquals(both[0], both[1], "kpipe closes where stock closes");
        assertReleased(before, 1);
    }

    @Test
    void pipelineAfterTheExpiryIsClosedUnanswered() throws Exception {
        double[] before = kpipeCounters();
        Outcome[] both = onBoth(node -> {
            try (RawKafkaConnection conn = connect(node)) {
                long lifetime = Scram.authenticate(conn, USER, PASSWORD, 1);
                long expired = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lifetime + 300);
                // the broker's clock decides the expiry; the client waits until it has surely passed
                while (System.nanoTime() < expired) {
                    TimeUnit.MILLISECONDS.sleep(20);
                }
                Pipeline p = new Pipeline()
                        .add(11, produce("expired 11"))
                        .add(12, WireInputs.metadata(List.of(TOPIC)))
                        .add(13, produce("expired 13"));
                return writeAndRead(conn, p);
            }
        });
        System.out.printf("ReauthenticationExpiryIT: after the expiry: stock %s, kpipe %s%n", both[0], both[1]);
        assertEquals(new Outcome(List.of(), "closed"), both[0], "stock closes at the first request");
        assertEquals(both[0], both[1], "kpipe closes where stock closes");
        assertReleased(before, 0); // refused at its first request: never pipelined
    }

    @Test
    void reauthenticationMidPipelineGetsEveryResponse() throws Exception {
        double[] before = kpipeCounters();
        Outcome[] both = onBoth(node -> {
            try (RawKafkaConnection conn = connect(node)) {
                Scram.authenticate(conn, USER, PASSWORD, 1);
                Pipeline first = new Pipeline()
                        .add(11, produce("reauth 11"))
                        .add(12, fetch(300))
                        .add(13, WireInputs.metadata(List.of(TOPIC)))
                        .add(14, Scram.handshake());
                conn.sendRaw(first.bytes.toByteArray());
                List<String> responses = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    responses.add(WireInputs.describe(conn.receiveFrame(), first.apis, first.versions));
                }
                responses.add("re-authenticated, session " + Scram.exchange(conn, USER, PASSWORD, 15) + " ms");
                Pipeline second = new Pipeline()
                        .add(21, produce("reauth 21"))
                        .add(22, produce("reauth 22"))
                        .add(23, produce("reauth 23"))
                        .add(24, WireInputs.metadata(List.of(TOPIC)));
                Outcome rest = writeAndRead(conn, second, true);
                responses.addAll(rest.responses());
                return new Outcome(responses, rest.end());
            }
        });
        System.out.printf(
                "ReauthenticationExpiryIT: re-authenticating mid-pipeline: stock %s, kpipe %s%n", both[0], both[1]);
        assertEquals(4 + 1 + 4, both[0].responses().size(), "stock answers every request: " + both[0]);
        assertEquals(both[0], both[1], "kpipe answers as stock does");
        assertReleased(before, 2); // before and again after the re-authentication
    }

    /** @return the outcome on stock, then on kpipe, the two run at the same time */
    private Outcome[] onBoth(StockAndKpipe.Client<Outcome> client) throws Exception {
        return clusters.onBoth(pool, client).toArray(new Outcome[0]);
    }

    private static RawKafkaConnection connect(KafkaNode node) throws Exception {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", node.saslPort()), 10_000);
        return new RawKafkaConnection(socket, "reauth-expiry", Duration.ofSeconds(FETCH_WAIT_MS / 1000 + 5));
    }

    private static Outcome writeAndRead(RawKafkaConnection conn, Pipeline p) throws Exception {
        return writeAndRead(conn, p, false);
    }

    /** Writes the pipeline in one go, half-closes if asked, and reads until the connection ends or stays quiet. */
    private static Outcome writeAndRead(RawKafkaConnection conn, Pipeline p, boolean halfClose) throws Exception {
        conn.sendRaw(p.bytes.toByteArray());
        if (halfClose) {
            conn.shutdownOutput();
        }
        List<String> responses = new ArrayList<>();
        while (true) {
            try {
                responses.add(WireInputs.describe(conn.receiveFrame(), p.apis, p.versions));
                if (responses.size() == p.apis.size()) {
                    conn.readTimeout(QUIET);
                }
            } catch (EOFException | SocketException e) {
                return new Outcome(responses, "closed");
            } catch (SocketTimeoutException e) {
                return new Outcome(responses, "open");
            }
        }
    }

    private static AbstractRequest produce(String value) {
        return WireInputs.produce(TOPIC, 0, (short) 1, PRODUCE_VERSION, value);
    }

    /** @return a FETCH v12 (topics by name) of the idle topic's end that waits {@code maxWaitMs} for 1 byte */
    private static AbstractRequest fetch(int maxWaitMs) {
        Map<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
        data.put(
                new TopicPartition(IDLE, 0),
                new FetchRequest.PartitionData(Uuid.ZERO_UUID, 0, -1, 1024, Optional.empty()));
        return FetchRequest.Builder.forConsumer((short) 12, maxWaitMs, 1, data).build((short) 12);
    }

    /** @return kpipe's counters the tests compare before and after: upgrades, deferred closes */
    private double[] kpipeCounters() throws Exception {
        KafkaNode node = clusters.kpipe().node(1);
        return new double[] {KpipeJmx.kpipe(node, "upgrade-total"), KpipeJmx.kpipe(node, "deferred-close-total")};
    }

    /**
     * Waits for kpipe's live-state gauges to return to 0, checks it caught no fault and, if {@code upgrades} > 0,
     * that it pipelined the connection at least that many times since {@code before}.
     */
    private void assertReleased(double[] before, int upgrades) throws Exception {
        KafkaNode node = clusters.kpipe().node(1);
        long zeroMs = KpipeGauges.awaitAllZero(node, Duration.ofSeconds(30));
        double[] after = kpipeCounters();
        System.out.printf(
                "ReauthenticationExpiryIT: kpipe live-state gauges back to 0 within %d ms; upgrades %.0f, deferred"
                        + " closes %.0f%n",
                zeroMs, after[0] - before[0], after[1] - before[1]);
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "faults caught in kpipe");
        if (upgrades > 0) {
            assertTrue(after[0] - before[0] >= upgrades, "kpipe pipelined the connection " + upgrades + " time(s)");
        }
    }
}
