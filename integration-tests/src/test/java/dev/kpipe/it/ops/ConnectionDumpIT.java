// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.clients.ExternalProcess;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * kpipe's connection dump ({@value ConnectionDumpReader#MBEAN}) read over JMX from a real broker while connections
 * pipeline with a known state, and printed by Kafka's own JmxTool.
 *
 * <p>One 2-node cluster. Node 2 follows with {@code replica.fetch.min.bytes} far above what the tests produce and
 * {@code replica.fetch.wait.max.ms=10000}, so an acks=all produce to a topic on both nodes waits for the follower's
 * next fetch (up to 10 s) and an acks=1 produce is answered at once: the window in which the dump is read with requests
 * in flight. 10 s keeps that state stable for long after the previous acks=all ack even on a loaded machine; Kafka
 * requires it to be at most {@code replica.lag.time.max.ms} and {@code replica.socket.timeout.ms} (both 30 s by
 * default). {@code kpipe.max.inflight.requests.per.connection=8}, so 8 requests in flight is the per-connection limit.
 */
@KafkaCluster(
        nodes = 2,
        brokerConfig = {"kpipe.max.inflight.requests.per.connection=8"},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=10000"})
class ConnectionDumpIT {

    /** Acknowledged only after the follower's next fetch (up to 10 s). */
    private static final String SLOW = "dump-slow";

    private static final Duration WINDOW = Duration.ofSeconds(10);

    @BeforeAll
    static void topics(Cluster cluster) {
        cluster.createTopics(
                List.of(new NewTopic(SLOW, Map.of(0, List.of(1, 2))).configs(Map.of("min.insync.replicas", "2"))),
                Duration.ofSeconds(60));
    }

    /**
     * A raw connection names its software in API_VERSIONS, upgrades with an acks=all produce, then writes 8 produces back
     * to back (acks=all and acks=1 alternating): the dump lists it PIPELINED with 8 requests and their bytes in flight, 4
     * acks=1 responses held behind the acks=all ones, at the per-connection limit, its listener, principal, client id and
     * software, and an oldest request no older than the time since the 8 were written. Once they are answered it is
     * listed idle and reading; closed, it is not listed.
     */
    @Test
    void aPipelinedConnectionAtItsInflightLimit(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        String clientId = "dump-raw";
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), clientId, Duration.ofSeconds(30))) {
            conn.send(
                    1,
                    new ApiVersionsRequest.Builder(
                                    new ApiVersionsRequestData()
                                            .setClientSoftwareName("kpipe-it-raw")
                                            .setClientSoftwareVersion("1.2.3"),
                                    (short) 3,
                                    (short) 3)
                            .build((short) 3));
            ApiVersionsResponse versions = (ApiVersionsResponse)
                    conn.receive(ApiKeys.API_VERSIONS, (short) 3).response();
            assertEquals(Errors.NONE.code(), versions.data().errorCode());
            conn.send(2, Wire.produce(SLOW, 0, (short) -1, Wire.bytes("d0")));
            Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 2);

            long written = System.nanoTime();
            long requestBytes = 0;
            List<Integer> ids = new ArrayList<>();
            for (int i = 1; i <= 8; i++) {
                ProduceRequest p = Wire.produce(SLOW, 0, (short) (i % 2 == 1 ? -1 : 1), Wire.bytes("d" + i));
                int id = 10 + i;
                requestBytes += Wire.sizeInBytes(p, clientId, id);
                conn.send(id, p);
                ids.add(id);
            }
            Map<String, String> pipelined = ConnectionDumpReader.await(
                    node,
                    clientId,
                    "8 requests in flight, 4 responses held, at the in-flight limit",
                    WINDOW,
                    c -> "8".equals(c.get("inflight.requests"))
                            && "4".equals(c.get("held.responses"))
                            && "inflight-limit".equals(c.get("waiting")));
            long sinceWrittenMs = (System.nanoTime() - written) / 1_000_000;
            System.out.println("ConnectionDumpIT: 8 in flight:\n" + ConnectionDumpReader.read(node));
            assertEquals("PIPELINED", pipelined.get("state"));
            assertEquals("PLAINTEXT", pipelined.get("listener"));
            assertEquals("User:ANONYMOUS", pipelined.get("principal"));
            assertEquals("kpipe-it-raw/1.2.3", pipelined.get("client.software"));
            assertEquals(Long.toString(requestBytes), pipelined.get("inflight.bytes"), "the 8 requests' bytes");
            long oldestMs = Long.parseLong(pipelined.get("oldest.inflight.ms"));
            assertTrue(
                    oldestMs >= 0 && oldestMs <= sinceWrittenMs,
                    "oldest request in flight " + oldestMs + " ms, written " + sinceWrittenMs
                            + " ms before the read returned");
            assertTrue(Long.parseLong(pipelined.get("pipelined.ms")) >= oldestMs, "upgraded before the 8 were read");
            assertTrue(
                    pipelined.get("connection").startsWith("127.0.0.1:" + node.port() + "-127.0.0.1:"),
                    pipelined.get("connection"));

            for (int id : ids) {
                Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), id);
            }
            Map<String, String> answered = ConnectionDumpReader.await(
                    node, clientId, "every response written", WINDOW, c -> "0".equals(c.get("inflight.requests")));
            assertEquals("reading", answered.get("waiting"), "pipelined, idle and readable: " + answered);
            assertEquals("-", answered.get("oldest.inflight.ms"));
        }
        ConnectionDumpReader.awaitGone(node, clientId, WINDOW);
    }

    /**
     * A raw connection upgrades, writes 3 produces (acks=all, acks=1, acks=all) and an exclusive LIST_OFFSETS behind
     * them: the dump lists it DRAINING for the held request with the 3 produces in flight and the acks=1 response held;
     * once every response is written it is Kafka's again and not listed.
     */
    @Test
    void aConnectionDrainingForAnExclusiveRequest(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        String clientId = "dump-drain";
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), clientId, Duration.ofSeconds(30))) {
            conn.send(1, Wire.produce(SLOW, 0, (short) -1, Wire.bytes("e0")));
            Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 1);
            for (int i = 1; i <= 3; i++) {
                conn.send(1 + i, Wire.produce(SLOW, 0, (short) (i == 2 ? 1 : -1), Wire.bytes("e" + i)));
            }
            conn.send(-5, Wire.listOffsets(SLOW));
            Map<String, String> draining = ConnectionDumpReader.await(
                    node,
                    clientId,
                    "draining for the LIST_OFFSETS",
                    WINDOW,
                    c -> "DRAINING".equals(c.get("state")) && "1".equals(c.get("held.responses")));
            assertEquals("drain-exclusive", draining.get("waiting"), draining.toString());
            assertEquals(
                    "3", draining.get("inflight.requests"), "the LIST_OFFSETS is held, not in flight: " + draining);
            assertEquals("unknown/unknown", draining.get("client.software"), "no API_VERSIONS sent: " + draining);
            for (int i = 1; i <= 3; i++) {
                Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 1 + i);
            }
            assertEquals(
                    -5,
                    conn.receive(ApiKeys.LIST_OFFSETS, Wire.LIST_OFFSETS_VERSION)
                            .correlationId());
            ConnectionDumpReader.awaitGone(node, clientId, WINDOW);
        }
    }

    /**
     * The Java producer's connection, idle after an acked send: listed with the client's own software name and version,
     * nothing in flight, reading; and Kafka's JmxTool prints the same dump in one read ({@code --one-time true}), as
     * docs/monitoring.md shows.
     */
    @Test
    void theJavaProducersConnectionAndJmxTool(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        String clientId = "dump-java";
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(SLOW, 0, null, Wire.bytes("j0"))).get(30, TimeUnit.SECONDS);
            Map<String, String> idle = ConnectionDumpReader.await(
                    node,
                    clientId,
                    "the producer's connection, idle",
                    WINDOW,
                    c -> "0".equals(c.get("inflight.requests")));
            assertEquals("PIPELINED", idle.get("state"));
            assertEquals("apache-kafka-java/" + AppInfoParser.getVersion(), idle.get("client.software"));
            assertEquals("User:ANONYMOUS", idle.get("principal"));
            assertEquals("PLAINTEXT", idle.get("listener"));
            assertEquals("-", idle.get("oldest.inflight.ms"), "nothing in flight");
            assertEquals("reading", idle.get("waiting"));

            String printed = jmxTool(cluster, node);
            assertTrue(printed.contains("kpipe connections: "), printed);
            assertTrue(printed.contains(" client.id=" + clientId + " "), printed);
            System.out.println("ConnectionDumpIT: JmxTool printed:\n" + printed);
        }
        ConnectionDumpReader.awaitGone(node, clientId, WINDOW);
    }

    /**
     * Runs {@code java -cp "libs/*" org.apache.kafka.tools.JmxTool ... --one-time true} against the node; its output
     * files stay in {@code target/jmxtool}.
     */
    private static String jmxTool(Cluster cluster, KafkaNode node) throws IOException, InterruptedException {
        ExternalProcess.Result r = ExternalProcess.run(
                List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        cluster.libsDir() + "/*",
                        "org.apache.kafka.tools.JmxTool",
                        "--jmx-url",
                        node.jmxServiceUrl(),
                        "--object-name",
                        ConnectionDumpReader.MBEAN,
                        "--one-time",
                        "true"),
                ExternalProcess.buildDir().resolve("jmxtool"),
                null,
                Duration.ofSeconds(120));
        assertEquals(0, r.exitCode(), r.describe() + "\nstdout:\n" + r.stdout());
        return r.stdout();
    }
}
