// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.harness.TestCertificates;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.BrokerApiVersions;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoublePredicate;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Authentication on pipelined connections, against a real 2-node cluster whose follower delays its fetches (so an
 * acks=all produce waits about 50 ms and a producer connection always has requests in flight):
 *
 * <ul>
 *   <li>SASL/SCRAM-SHA-512 re-authentication (KIP-368) with {@code connections.max.reauth.ms=2000}: the Java client
 *       re-authenticates every 1.7 to 1.9 s, each time while produce requests are in flight on the broker, over
 *       SASL_PLAINTEXT and over SASL_SSL. Every record is acknowledged once and stored once in per-partition order,
 *       no send fails, no record is retried, no connection is closed after the warm-up, no
 *       (re-)authentication fails, no connection outlives its session, the broker re-authenticated the connections
 *       (its own {@code successful-reauthentication-total}) and kpipe deferred re-authentications until the earlier
 *       responses were written, then pipelined the connection again. ({@link ReauthenticationWireIT} shows, byte
 *       by byte, what the deferral prevents.)</li>
 *   <li>TLS: hundreds of small produce requests written back to back in one burst (the broker decrypts many
 *       requests per TLS record, so the next request is already buffered in the TLS layer when kpipe unmutes the
 *       connection): every response arrives, in order, and the connection is pipelined.</li>
 * </ul>
 * The TLS listeners use a CA and broker certificate the harness generates when it lays the cluster out.
 */
@KafkaCluster(
        nodes = 2,
        saslScram = true,
        tls = true,
        brokerConfig = {"num.io.threads=8", "connections.max.reauth.ms=" + ReauthenticationIT.REAUTH_MS},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=50"})
class ReauthenticationIT {
    /** Produce by topic name: v12, or the broker's newest if older (v11 on 3.8/3.9). */
    private static final short PRODUCE_VERSION =
            BrokerApiVersions.harnessDefault().upTo(ApiKeys.PRODUCE, (short) 12);

    static final int REAUTH_MS = 2000;
    private static final String USER = "reauth-user";
    private static final String PASSWORD = "reauth-secret";
    private static final int PARTITIONS = 3;
    private static final int PRODUCERS = 2;
    private static final Duration RUN = Duration.ofSeconds(15);
    /** Bootstrap connections are closed early on; the run must close none after this. */
    private static final Duration WARM_UP = Duration.ofSeconds(2);
    /** Records per second per producer (paced), so the run stays a few tens of thousands of records. */
    private static final int RATE = 2000;

    @BeforeAll
    static void scramUser(Cluster cluster) throws Exception {
        Scram.createUser(
                cluster,
                USER,
                PASSWORD,
                List.of(cluster.saslClientConfig(USER, PASSWORD), cluster.saslSslClientConfig(USER, PASSWORD)));
    }

    @Test
    void saslPlaintextReauthenticatesWhileRequestsArePipelined(Cluster cluster) throws Exception {
        reauthenticationWhilePipelined(cluster, KafkaNode.SASL_LISTENER, cluster.saslClientConfig(USER, PASSWORD));
    }

    @Test
    void saslSslReauthenticatesWhileRequestsArePipelined(Cluster cluster) throws Exception {
        reauthenticationWhilePipelined(
                cluster, KafkaNode.SASL_SSL_LISTENER, cluster.saslSslClientConfig(USER, PASSWORD));
    }

    private void reauthenticationWhilePipelined(Cluster cluster, String listener, Map<String, Object> clientConfig)
            throws Exception {
        String topic = "reauth-" + listener.toLowerCase();
        createSlowTopic(cluster, topic);
        KafkaNode leader = cluster.node(1);
        double reauthBefore = socketServer(leader, listener, "successful-reauthentication-total");
        double failedReauthBefore = socketServer(leader, listener, "failed-reauthentication-total");
        double expiredBefore = socketServer(leader, listener, "expired-connections-killed-count");
        double deferredBefore = KpipeJmx.kpipe(leader, "reauthentication-drain-total");
        double upgradesBefore = KpipeJmx.kpipe(leader, "upgrade-total");
        double pipelinedBefore = KpipeJmx.kpipe(leader, "pipelined-request-total");

        List<Load> loads = new ArrayList<>();
        for (int k = 0; k < PRODUCERS; k++) {
            loads.add(new Load(k, topic, clientConfig));
        }
        loads.forEach(Load::start);
        for (Load l : loads) {
            l.join();
        }

        long total = loads.stream().mapToLong(l -> l.sent).sum();
        double reauths = socketServer(leader, listener, "successful-reauthentication-total") - reauthBefore;
        double deferred = KpipeJmx.kpipe(leader, "reauthentication-drain-total") - deferredBefore;
        double upgrades = KpipeJmx.kpipe(leader, "upgrade-total") - upgradesBefore;
        System.out.printf(
                "%s: %d records, broker re-authentications %.0f (latency max %.1f ms), deferred by kpipe "
                        + "%.0f, upgrades %.0f, pipelined requests %.0f, expired connections killed %.0f%n",
                listener,
                total,
                reauths,
                socketServerMax(leader, listener, "reauthentication-latency-max"),
                deferred,
                upgrades,
                KpipeJmx.kpipe(leader, "pipelined-request-total") - pipelinedBefore,
                socketServer(leader, listener, "expired-connections-killed-count") - expiredBefore);
        for (Load l : loads) {
            System.out.printf(
                    "  producer %d: sent %d, acknowledged %d, re-authentications %.0f (client latency max"
                            + " %.0f ms), retries %.0f, connections created/closed in the last %d s: %.0f/%.0f, failure %s%n",
                    l.index,
                    l.sent,
                    l.acknowledged,
                    l.metric("successful-reauthentication-total"),
                    l.metric("reauthentication-latency-max"),
                    l.metric("record-retry-total"),
                    RUN.minus(WARM_UP).toSeconds(),
                    l.metric("connection-creation-total") - l.createdAfterWarmUp,
                    l.metric("connection-close-total") - l.closedAfterWarmUp,
                    l.failure.get());
        }
        for (Load l : loads) {
            assertNull(l.failure.get(), "producer " + l.index + ": no send failed");
            assertEquals(l.sent, l.acknowledged, "producer " + l.index + ": every record acknowledged once");
            assertEquals(0.0, l.metric("record-retry-total"), "producer " + l.index + ": no record was retried");
            assertEquals(0.0, l.metric("record-error-total"), "producer " + l.index);
            assertEquals(0.0, l.metric("failed-authentication-total"), "producer " + l.index);
            assertEquals(0.0, l.metric("failed-reauthentication-total"), "producer " + l.index);
            assertEquals(
                    l.closedAfterWarmUp,
                    l.metric("connection-close-total"),
                    "producer " + l.index + ": no connection was closed after the warm-up");
            assertTrue(
                    l.metric("successful-reauthentication-total") >= 4,
                    "producer " + l.index + " re-authenticated several times");
        }
        assertTrue(reauths >= PRODUCERS * 4, "the broker re-authenticated the producers' connections: " + reauths);
        assertEquals(0.0, socketServer(leader, listener, "failed-reauthentication-total") - failedReauthBefore);
        assertEquals(
                0.0,
                socketServer(leader, listener, "expired-connections-killed-count") - expiredBefore,
                "no connection outlived its session");
        assertTrue(
                deferred >= PRODUCERS,
                "re-authentications arrived with requests in flight and waited for them: " + deferred);
        assertTrue(upgrades >= deferred, "after each re-authentication the connection was pipelined again");
        assertTrue(KpipeJmx.kpipe(leader, "inflight-requests-per-connection-max") > 1);
        assertEquals(
                0.0, KpipeJmx.kpipe(leader, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");
        assertEquals(0, KpipeJmx.produceErrors(leader, "OUT_OF_ORDER_SEQUENCE_NUMBER"));

        verifyStored(cluster, topic, loads);
    }

    @Test
    void tlsListenerPipelinesABurstOfSmallRequestsInOrder(Cluster cluster) throws Exception {
        String topic = "tls-burst";
        createSlowTopic(cluster, topic);
        KafkaNode leader = cluster.node(1);
        double pipelinedBefore = KpipeJmx.kpipe(leader, "pipelined-request-total");
        int requests = 300;
        Random random = new Random(7);
        List<Integer> ids = new ArrayList<>();
        Set<Integer> used = new HashSet<>();
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        try (RawKafkaConnection conn = new RawKafkaConnection(
                tlsSocket(cluster.certificates(), leader.sslPort()), "tls-burst", Duration.ofSeconds(30))) {
            for (int i = 0; i < requests; i++) {
                int id;
                do {
                    id = random.nextInt();
                } while (!used.add(id));
                ids.add(id);
                burst.write(conn.frame(id, produce(topic, i % PARTITIONS, "r" + i)));
            }
            conn.sendRaw(burst.toByteArray()); // about 30 KB in two TLS records: many requests per record
            awaitKpipe(leader, "inflight-requests", v -> v >= 2, "several requests of the connection in flight");
            long[] nextOffset = new long[PARTITIONS];
            for (int i = 0; i < requests; i++) {
                RawKafkaConnection.Received r = conn.receive(ApiKeys.PRODUCE, PRODUCE_VERSION);
                assertEquals(ids.get(i), r.correlationId(), "response " + i + " answers request " + i);
                ProduceResponse pr = (ProduceResponse) r.response();
                var p = pr.data()
                        .responses()
                        .iterator()
                        .next()
                        .partitionResponses()
                        .get(0);
                assertEquals(Errors.NONE.code(), p.errorCode(), "produce error " + Errors.forCode(p.errorCode()));
                assertEquals(nextOffset[i % PARTITIONS]++, p.baseOffset(), "request " + i + " appended in order");
            }
        }
        assertTrue(
                KpipeJmx.kpipe(leader, "pipelined-request-total") - pipelinedBefore >= requests,
                "every request of the burst was pipelined");
        assertEquals(0.0, KpipeJmx.kpipe(leader, "plugin-fault-total"));
    }

    // ------------------------------------------------------------------ load

    /** One idempotent acks=all producer sending paced records for {@link #RUN}; keys are (producer, sequence). */
    private static final class Load extends Thread {
        final int index;
        final String topic;
        final Map<String, Object> props;
        final AtomicReference<Exception> failure = new AtomicReference<>();
        volatile long sent;
        volatile long acknowledged;
        volatile double createdAfterWarmUp = Double.NaN;
        volatile double closedAfterWarmUp = Double.NaN;
        /** Per partition, the offset of the last acknowledged record (callbacks run in order per partition). */
        final long[] lastOffset = new long[PARTITIONS];
        /** The producer's live metrics while it runs. */
        volatile Map<MetricName, ? extends Metric> metrics;
        /** The values of its {@code producer-metrics} once every record was acknowledged, before it closed. */
        volatile Map<String, Double> atEnd;

        Load(int index, String topic, Map<String, Object> clientConfig) {
            super("reauth-load-" + index);
            this.index = index;
            this.topic = topic;
            this.props = new HashMap<>(clientConfig);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 1024 * 1024);
            props.put(ProducerConfig.CLIENT_ID_CONFIG, "reauth-" + index);
            Arrays.fill(lastOffset, -1);
        }

        @Override
        public void run() {
            try (KafkaProducer<Long, byte[]> producer =
                    new KafkaProducer<>(props, new LongSerializer(), new ByteArraySerializer())) {
                long start = System.nanoTime();
                long end = start + RUN.toNanos();
                long seq = 0;
                metrics = producer.metrics();
                while (System.nanoTime() < end) {
                    if (Double.isNaN(createdAfterWarmUp) && System.nanoTime() - start > WARM_UP.toNanos()) {
                        createdAfterWarmUp = metric("connection-creation-total");
                        closedAfterWarmUp = metric("connection-close-total");
                    }
                    long due = (System.nanoTime() - start) * RATE / 1_000_000_000L;
                    for (; seq < due; seq++) {
                        long key = ((long) index << 40) | seq;
                        int partition = (int) (seq % PARTITIONS);
                        producer.send(new ProducerRecord<>(topic, partition, key, value(key)), (md, e) -> {
                            if (e != null) {
                                failure.compareAndSet(null, e);
                                return;
                            }
                            synchronized (lastOffset) {
                                if (md.offset() <= lastOffset[md.partition()]) {
                                    failure.compareAndSet(
                                            null,
                                            new IllegalStateException("partition "
                                                    + md.partition() + " acknowledged offset " + md.offset() + " after "
                                                    + lastOffset[md.partition()]));
                                }
                                lastOffset[md.partition()] = md.offset();
                                acknowledged++;
                            }
                        });
                    }
                    TimeUnit.MILLISECONDS.sleep(5); // pacing
                }
                producer.flush();
                sent = seq;
                // Values now: closing the producer closes its connections (and counts them).
                Map<String, Double> values = new HashMap<>();
                for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
                    if (e.getKey().group().equals("producer-metrics")
                            && e.getValue().metricValue() instanceof Number n) {
                        values.put(e.getKey().name(), n.doubleValue());
                    }
                }
                atEnd = values;
            } catch (Exception e) {
                failure.compareAndSet(null, e);
            }
        }

        /** @return a {@code producer-metrics} value: at the end of the run once it ended, else now */
        double metric(String name) {
            Map<String, Double> end = atEnd;
            if (end != null) {
                Double v = end.get(name);
                if (v == null) {
                    throw new AssertionError("no producer metric " + name);
                }
                return v;
            }
            if (metrics == null) {
                return Double.NaN; // the producer failed to start (see failure)
            }
            for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
                if (e.getKey().group().equals("producer-metrics")
                        && e.getKey().name().equals(name)) {
                    return ((Number) e.getValue().metricValue()).doubleValue();
                }
            }
            throw new AssertionError("no producer metric " + name);
        }
    }

    private static byte[] value(long key) {
        return ByteBuffer.allocate(64).putLong(0, key).putLong(56, ~key).array();
    }

    /** Reads the topic back: per partition, each producer's keys in sequence order, each exactly once. */
    private static void verifyStored(Cluster cluster, String topic, List<Load> loads) {
        long expected = loads.stream().mapToLong(l -> l.sent).sum();
        // One stream per producer and partition: producer k's records to partition p have sequence numbers p, p+P, ...
        RecordReadBack.Order order = RecordReadBack.Order.contiguous(
                loads.size() * PARTITIONS,
                s -> s % PARTITIONS,
                PARTITIONS,
                s -> "producer " + s / PARTITIONS + ", partition " + s % PARTITIONS);
        RecordReadBack.Counts read = RecordReadBack.readToEnd(
                cluster, topic, new LongDeserializer(), new ByteArrayDeserializer(), Duration.ofSeconds(60), r -> {
                    int producer = (int) (r.key() >>> 40);
                    long seq = r.key() & ((1L << 40) - 1);
                    order.next(producer * PARTITIONS + r.partition(), seq);
                    assertEquals(ByteBuffer.wrap(value(r.key())), ByteBuffer.wrap(r.value()));
                });
        assertEquals(expected, read.total(), "every acknowledged record stored, none beyond those produced");
    }

    // ------------------------------------------------------------------ helpers

    /** A topic led by node 1 and replicated to node 2, whose delayed fetches make acks=all take about 50 ms. */
    private static void createSlowTopic(Cluster cluster, String topic) {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(p, List.of(1, 2));
        }
        cluster.createTopics(
                List.of(new NewTopic(topic, assignment).configs(Map.of("min.insync.replicas", "2"))),
                Duration.ofSeconds(60));
    }

    private static ProduceRequest produce(String topic, int partition, String value) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic);
        t.setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                .setIndex(partition)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes())))));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(t);
        ProduceRequestData data = new ProduceRequestData()
                .setAcks((short) -1)
                .setTimeoutMs(30_000)
                .setTopicData(topics);
        return new ProduceRequest.Builder(PRODUCE_VERSION, PRODUCE_VERSION, data).build(PRODUCE_VERSION);
    }

    /** A TLS socket to 127.0.0.1 that trusts only the cluster's test CA and verifies the host name. */
    private static SSLSocket tlsSocket(TestCertificates tls, int port) throws Exception {
        KeyStore trust = KeyStore.getInstance(TestCertificates.STORE_TYPE);
        try (InputStream in = Files.newInputStream(tls.trustStore())) {
            trust.load(in, tls.password().toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port);
        SSLParameters params = socket.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        socket.setSSLParameters(params);
        socket.startHandshake();
        return socket;
    }

    /** Sum of a socket-server metric over the listener's network processors on the node. */
    private static double socketServer(KafkaNode node, String listener, String metric) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        double sum = 0;
        for (ObjectName name : jmx.queryNames(
                new ObjectName("kafka.server:type=socket-server-metrics,listener=" + listener + ",networkProcessor=*"),
                null)) {
            sum += ((Number) jmx.getAttribute(name, metric)).doubleValue();
        }
        return sum;
    }

    private static double socketServerMax(KafkaNode node, String listener, String metric) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        double max = 0;
        for (ObjectName name : jmx.queryNames(
                new ObjectName("kafka.server:type=socket-server-metrics,listener=" + listener + ",networkProcessor=*"),
                null)) {
            double v = ((Number) jmx.getAttribute(name, metric)).doubleValue();
            if (!Double.isNaN(v)) {
                max = Math.max(max, v);
            }
        }
        return max;
    }

    private static void awaitKpipe(KafkaNode node, String metric, DoublePredicate ok, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        double v;
        while (!ok.test(v = KpipeJmx.kpipe(node, metric))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": " + metric + " stayed " + v);
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
    }
}
