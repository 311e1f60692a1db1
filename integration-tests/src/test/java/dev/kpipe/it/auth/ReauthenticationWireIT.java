// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.BrokerApiVersions;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * SASL re-authentication (KIP-368) while a response is being written, made deterministic on the wire, against a
 * real broker with {@code connections.max.reauth.ms=1500}: a SCRAM-SHA-512 client with a 4 KiB socket receive
 * buffer pipelines a PRODUCE (which pipelines the connection), a METADATA whose response is about 1 MB (naming 5,000
 * unknown topics, so the broker is still writing it, stalled on the full socket) and a {@code SASL_HANDSHAKE} that
 * starts re-authentication, and only then reads.
 *
 * <p>Stock Kafka reads the handshake only once the metadata response is written. Had kpipe let the broker begin
 * re-authenticating as soon as it read the handshake, the broker's authenticator would write the handshake response
 * straight to the socket, into the middle of the metadata response, and the selector would write nothing more of
 * the connection until the client answered the SASL exchange: the client cannot parse its stream and waits forever
 * (checked by hand: read timeout in the middle of the metadata frame). kpipe defers the re-authentication: the client
 * reads the produce response, the whole metadata response, then the handshake response, re-authenticates, and the
 * connection is pipelined again.
 */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(
        nodes = 1,
        saslScram = true,
        brokerConfig = {"connections.max.reauth.ms=" + ReauthenticationWireIT.REAUTH_MS})
class ReauthenticationWireIT {

    static final int REAUTH_MS = 1500;
    private static final String USER = "wire-user";
    private static final String PASSWORD = "wire-secret";

    @Test
    void rawClientSeesEveryEarlierResponseBeforeTheReauthenticationExchange(Cluster cluster) throws Exception {
        Scram.createUser(cluster, USER, PASSWORD, List.of(cluster.saslClientConfig(USER, PASSWORD)));
        String topic = "raw-reauth";
        cluster.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(1)))), Duration.ofSeconds(60));
        KafkaNode node = cluster.node(1);
        double deferredBefore = KpipeJmx.kpipe(node, "reauthentication-drain-total");
        double reauthBefore = reauthentications(node);
        double upgradesBefore = KpipeJmx.kpipe(node, "upgrade-total");
        // The newest versions this broker and the test's clients share (produce v11 on 3.8/3.9, v12 from 4.0).
        BrokerApiVersions versions = BrokerApiVersions.of("127.0.0.1", node.port());
        short produceVersion = versions.upTo(ApiKeys.PRODUCE, (short) 12);
        short metadataVersion = versions.upTo(ApiKeys.METADATA, (short) 12);
        // Built before authenticating: the session lasts REAUTH_MS, and the requests must reach the broker within it.
        ProduceRequest before = produce(topic, "before", produceVersion);
        List<String> unknown = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            unknown.add("no-such-topic-" + i + "-" + "x".repeat(180));
        }
        MetadataRequest metadataRequest = new MetadataRequest.Builder(unknown, false).build(metadataVersion);
        Socket socket = new Socket();
        socket.setReceiveBufferSize(4096);
        socket.connect(new InetSocketAddress("127.0.0.1", node.saslPort()), 10_000);
        try (RawKafkaConnection conn = new RawKafkaConnection(socket, "raw-reauth", Duration.ofSeconds(30))) {
            assertEquals(
                    REAUTH_MS,
                    Scram.authenticate(conn, USER, PASSWORD, 100),
                    "the session expires: re-authentication is on");

            conn.send(11, before);
            conn.send(12, metadataRequest);
            conn.send(13, Scram.handshake());

            assertEquals(11, conn.receive(ApiKeys.PRODUCE, produceVersion).correlationId());
            RawKafkaConnection.Received metadata = conn.receive(ApiKeys.METADATA, metadataVersion);
            assertEquals(12, metadata.correlationId(), "the metadata response, whole, before the SASL exchange");
            assertEquals(
                    unknown.size(),
                    ((MetadataResponse) metadata.response()).data().topics().size());
            RawKafkaConnection.Received handshake = conn.receive(ApiKeys.SASL_HANDSHAKE, (short) 1);
            assertEquals(13, handshake.correlationId(), "then the handshake response");
            assertEquals(Errors.NONE, ((SaslHandshakeResponse) handshake.response()).error());
            assertEquals(REAUTH_MS, Scram.exchange(conn, USER, PASSWORD, 200), "re-authenticated: a new session");

            conn.send(21, produce(topic, "after", produceVersion));
            RawKafkaConnection.Received after = conn.receive(ApiKeys.PRODUCE, produceVersion);
            assertEquals(21, after.correlationId());
            var p = ((ProduceResponse) after.response())
                    .data()
                    .responses()
                    .iterator()
                    .next()
                    .partitionResponses()
                    .get(0);
            assertEquals(Errors.NONE.code(), p.errorCode());
            assertEquals(1, p.baseOffset(), "both records stored, in order");
        }
        assertEquals(
                1.0,
                KpipeJmx.kpipe(node, "reauthentication-drain-total") - deferredBefore,
                "kpipe deferred the re-authentication");
        assertEquals(1.0, reauthentications(node) - reauthBefore, "the broker re-authenticated the connection");
        assertEquals(
                2.0,
                KpipeJmx.kpipe(node, "upgrade-total") - upgradesBefore,
                "pipelined before, and again after, the re-authentication");
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"));
    }

    private static ProduceRequest produce(String topic, String value, short version) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic);
        t.setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                .setIndex(0)
                .setRecords(MemoryRecords.withRecords(
                        Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8))))));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(t);
        ProduceRequestData data =
                new ProduceRequestData().setAcks((short) 1).setTimeoutMs(30_000).setTopicData(topics);
        return new ProduceRequest.Builder(version, version, data).build(version);
    }

    /** The broker's own count of successful re-authentications on the SASL listener (all network processors). */
    private static double reauthentications(KafkaNode node) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        double sum = 0;
        for (ObjectName name : jmx.queryNames(
                new ObjectName("kafka.server:type=socket-server-metrics,listener=" + KafkaNode.SASL_LISTENER
                        + ",networkProcessor=*"),
                null)) {
            sum += ((Number) jmx.getAttribute(name, "successful-reauthentication-total")).doubleValue();
        }
        return sum;
    }
}
