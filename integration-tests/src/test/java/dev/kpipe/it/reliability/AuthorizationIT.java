// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.auth.Scram;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * ACLs on pipelined connections: Kafka's {@code StandardAuthorizer} on a 2-node cluster with a SASL_PLAINTEXT
 * (SCRAM-SHA-512) listener, where user {@value #USER} may write the topics whose names start with {@value #ALLOWED}
 * (a prefixed ACL) and only describe topic {@value #DENIED}. The follower delays its fetches by up to {@value #WINDOW_MS} ms, so an acks=all produce waits for
 * it while the refused one is answered at once: kpipe must hold the refusal behind the slower successes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the raw pipeline first: kpipe's in-flight peak is then its own
@KafkaCluster(
        nodes = 2,
        saslScram = true,
        brokerConfig = {
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            // the PLAINTEXT listeners (inter-broker, controller, the harness's admin client) are ANONYMOUS
            "super.users=User:ANONYMOUS"
        },
        nodeConfig = {"2:replica.fetch.min.bytes=1000000000", "2:replica.fetch.wait.max.ms=" + AuthorizationIT.WINDOW_MS
        })
class AuthorizationIT {

    static final int WINDOW_MS = 40;
    private static final String USER = "alice";
    private static final String PASSWORD = "alice-secret";
    private static final String ALLOWED = "authz-allowed";
    private static final String DENIED = "authz-denied";
    /** The Java producer's allowed topic; the ACL on {@value #ALLOWED} is a prefix ACL covering it. */
    private static final String ALLOWED_JAVA = "authz-allowed-java";

    private static final int ROUNDS = 10;

    private Cluster cluster;

    @BeforeAll
    void usersTopicsAcls(Cluster cluster) throws Exception {
        this.cluster = cluster;
        Map<Integer, List<Integer>> leader1 = Map.of(0, List.of(1, 2));
        cluster.createTopics(
                List.of(
                        new NewTopic(ALLOWED, leader1).configs(Map.of("min.insync.replicas", "2")),
                        new NewTopic(ALLOWED_JAVA, leader1).configs(Map.of("min.insync.replicas", "2")),
                        new NewTopic(DENIED, leader1).configs(Map.of("min.insync.replicas", "2"))),
                Duration.ofSeconds(60));
        Scram.upsertUser(cluster, USER, PASSWORD);
        String principal = "User:" + USER;
        cluster.admin()
                .createAcls(List.of(
                        new AclBinding(
                                new ResourcePattern(ResourceType.TOPIC, ALLOWED, PatternType.PREFIXED),
                                new AccessControlEntry(principal, "*", AclOperation.WRITE, AclPermissionType.ALLOW)),
                        new AclBinding(
                                new ResourcePattern(ResourceType.TOPIC, DENIED, PatternType.LITERAL),
                                new AccessControlEntry(
                                        principal, "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW))))
                .all()
                .get(30, TimeUnit.SECONDS);
        // Until the credentials and ACLs reached the brokers: the user authenticates and may describe both topics.
        Scram.awaitAccepted(
                cluster.saslClientConfig(USER, PASSWORD),
                Duration.ofSeconds(60),
                USER + " authenticates and describes the topics",
                admin -> admin.describeTopics(List.of(ALLOWED, ALLOWED_JAVA, DENIED))
                        .allTopicNames()
                        .get(5, TimeUnit.SECONDS));
    }

    /**
     * A raw client authenticates with SCRAM and writes, {@value #ROUNDS} times for acks=all and for acks=1, five
     * produce requests back to back: {@value #ALLOWED}, {@value #ALLOWED}, {@value #DENIED}, {@value #ALLOWED},
     * {@value #ALLOWED}. Each refused one gets TOPIC_AUTHORIZATION_FAILED, its neighbours succeed, every response
     * comes in request order, kpipe had several requests of the connection in flight, and the allowed records are
     * stored once each, in order; nothing reached the denied topic.
     */
    @Test
    @Order(1)
    void aRefusedProduceInTheMiddleOfAPipelineFailsAloneAndInOrder() throws Exception {
        KafkaNode node = cluster.node(1);
        assertTrue(
                KpipeJmx.kpipe(node, "inflight-requests-per-connection-max") < 2,
                "no connection had several requests in flight before this test");
        double upgrades = KpipeJmx.kpipe(node, "upgrade-total");
        double pipelined = KpipeJmx.kpipe(node, "pipelined-request-total");
        Random random = new Random(3);
        List<String> expectedStored = new ArrayList<>();
        Map<String, Integer> errors = new HashMap<>();
        int seq = 0;
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.saslPort(), "authz-raw", Duration.ofSeconds(30))) {
            Scram.authenticate(conn, USER, PASSWORD, 1);
            for (int round = 0; round < 2 * ROUNDS; round++) {
                short acks = round < ROUNDS ? (short) -1 : (short) 1;
                String[] topics = {ALLOWED, ALLOWED, DENIED, ALLOWED, ALLOWED};
                List<Integer> ids = new ArrayList<>();
                Set<Integer> used = new HashSet<>();
                for (String topic : topics) {
                    int id;
                    do {
                        id = random.nextInt();
                    } while (!used.add(id));
                    String value = topic.equals(ALLOWED) ? "a" + seq++ : "denied";
                    if (topic.equals(ALLOWED)) {
                        expectedStored.add(value);
                    }
                    conn.send(id, WireInputs.produce(topic, 0, acks, value));
                    ids.add(id);
                }
                for (int i = 0; i < topics.length; i++) {
                    RawKafkaConnection.Received r = conn.receive(ApiKeys.PRODUCE, (short) 12);
                    assertEquals(ids.get(i), r.correlationId(), "round " + round + ": response " + i + " out of order");
                    Errors error = Errors.forCode(((ProduceResponse) r.response())
                            .data()
                            .responses()
                            .iterator()
                            .next()
                            .partitionResponses()
                            .get(0)
                            .errorCode());
                    assertEquals(
                            topics[i].equals(DENIED) ? Errors.TOPIC_AUTHORIZATION_FAILED : Errors.NONE,
                            error,
                            "round " + round + " (acks=" + acks + "): response " + i + " to " + topics[i]);
                    errors.merge(error.name(), 1, Integer::sum);
                }
            }
        }
        double maxInflight = KpipeJmx.kpipe(node, "inflight-requests-per-connection-max");
        System.out.printf(
                "AuthorizationIT: %d rounds of A,A,B,A,A on one SASL connection: responses %s, in order;"
                        + " kpipe upgrades +%.0f, pipelined requests +%.0f, most in flight on one connection %.0f%n",
                2 * ROUNDS,
                errors,
                KpipeJmx.kpipe(node, "upgrade-total") - upgrades,
                KpipeJmx.kpipe(node, "pipelined-request-total") - pipelined,
                maxInflight);
        assertTrue(KpipeJmx.kpipe(node, "upgrade-total") > upgrades, "the SASL connection was upgraded");
        assertTrue(
                KpipeJmx.kpipe(node, "pipelined-request-total") - pipelined >= 10 * ROUNDS,
                "the produce requests were pipelined");
        assertTrue(maxInflight >= 2, "more than one request of the connection was in flight in the broker");
        assertEquals(
                expectedStored, consume(ALLOWED, expectedStored.size()), ALLOWED + " holds each record once, in order");
        assertEquals(List.of(), consume(DENIED, 0), DENIED + " holds nothing");
    }

    /**
     * The Java idempotent producer (acks=all, 5 in flight) of the user sends to two topics, interleaved: every send
     * to {@value #DENIED} fails with {@link TopicAuthorizationException}, every send to {@value #ALLOWED_JAVA} succeeds
     * and its records are stored once each, in order.
     */
    @Test
    @Order(2)
    void aJavaProducerWritingToBothTopicsStoresTheAllowedRecordsOnceInOrder() throws Exception {
        // its own allowed topic: the raw test's records are not mixed in
        String allowed = ALLOWED_JAVA;
        int records = 3000;
        KafkaNode node = cluster.node(1);
        double upgrades = KpipeJmx.kpipe(node, "upgrade-total");
        Map<String, Object> p = new HashMap<>(cluster.saslClientConfig(USER, PASSWORD));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 512);
        ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger acked = new AtomicInteger();
        List<String> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < records; i++) {
                String value = "j" + i;
                sent.add(value);
                producer.send(new ProducerRecord<>(allowed, 0, null, value), (md, e) -> {
                    if (e != null) {
                        unexpected.add(value + ": " + e);
                    } else {
                        acked.incrementAndGet();
                    }
                });
                if (i % 3 == 0) {
                    producer.send(new ProducerRecord<>(DENIED, 0, null, "denied" + i), (md, e) -> {
                        if (e instanceof TopicAuthorizationException) {
                            refused.incrementAndGet();
                        } else {
                            unexpected.add("denied record after " + value + ": "
                                    + (e == null ? "acknowledged" : e.toString()));
                        }
                    });
                }
            }
            producer.flush();
        }
        System.out.printf(
                "AuthorizationIT: Java producer: %d records acknowledged on %s, %d refused on %s%n",
                acked.get(), allowed, refused.get(), DENIED);
        assertEquals(List.of(), List.copyOf(unexpected), "unexpected send outcomes");
        assertEquals(records, acked.get());
        assertEquals((records + 2) / 3, refused.get());
        assertTrue(KpipeJmx.kpipe(node, "upgrade-total") > upgrades, "the producer's connection was pipelined");
        List<String> stored = consume(allowed, -1);
        assertEquals(sent, stored, allowed + ": each record once, in order");
    }

    /**
     * @return the values of partition 0 of the topic, read as the super user once its high watermark reached
     *     {@code expected} (the acks=1 rounds are acknowledged before the delayed follower has them); {@code expected}
     *     < 0: all there are
     */
    private List<String> consume(String topic, int expected) throws InterruptedException {
        if (expected > 0) {
            RecordReadBack.awaitHighWatermark(cluster, new TopicPartition(topic, 0), expected, Duration.ofSeconds(60));
        }
        List<String> out = new ArrayList<>();
        RecordReadBack.Counts read = RecordReadBack.readToEnd(
                cluster,
                topic,
                new StringDeserializer(),
                new StringDeserializer(),
                Duration.ofSeconds(60),
                r -> out.add(r.value()));
        assertEquals(1, read.perPartition().length, topic + ": partitions");
        if (expected >= 0) {
            assertEquals(expected, out.size(), topic + ": records stored");
        }
        return out;
    }
}
