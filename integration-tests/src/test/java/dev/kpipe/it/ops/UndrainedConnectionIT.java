// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A pipelined connection whose client never reads its responses, on a real broker: once the broker's write of its
 * oldest response is incomplete (both sockets' buffers full) with another response held behind it, kpipe reads it no
 * further ({@code waiting=undrained}, {@code wait-undrained-total}), where without the bound it would read up to
 * {@code kpipe.max.inflight.requests.per.connection} (16) requests and hold their responses; meanwhile a Java producer
 * on another connection gets every acknowledgement.
 *
 * <p>One node; {@code socket.send.buffer.bytes=4096} and the raw client's 2 KiB receive buffer make the unread acks=1
 * responses (about 70 B each) fill both buffers within a few hundred requests.
 */
@KafkaCluster(
        nodes = 1,
        brokerConfig = {"socket.send.buffer.bytes=4096"})
class UndrainedConnectionIT {

    private static final String RAW = "undrained-raw";
    private static final String GOOD = "undrained-good";
    private static final Duration WINDOW = Duration.ofSeconds(30);
    /** Records the good producer sends while the raw connection is undrained. */
    private static final int GOOD_RECORDS = 200;

    @BeforeAll
    static void topics(Cluster cluster) {
        cluster.createTopics(
                List.of(new NewTopic(RAW, Map.of(0, List.of(1))), new NewTopic(GOOD, Map.of(0, List.of(1)))),
                Duration.ofSeconds(60));
    }

    @Test
    void aConnectionThatNeverReadsIsReadNoFurtherWhileAGoodProducerIsAcknowledged(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        String clientId = "undrained";
        Socket socket = new Socket();
        socket.setReceiveBufferSize(2048);
        socket.connect(new InetSocketAddress("127.0.0.1", node.port()), 10_000);
        AtomicInteger written = new AtomicInteger();
        try (RawKafkaConnection conn = new RawKafkaConnection(socket, clientId, Duration.ofSeconds(30))) {
            conn.send(1, Wire.produce(RAW, 0, (short) 1, new byte[1024]));
            Wire.assertProduced(conn.receive(ApiKeys.PRODUCE, Wire.PRODUCE_VERSION), 1);
            written.incrementAndGet();
            Thread writer = new Thread(
                    () -> {
                        try {
                            for (int id = 2; ; id++) {
                                conn.send(id, Wire.produce(RAW, 0, (short) 1, new byte[1024]));
                                written.incrementAndGet();
                            }
                        } catch (Exception e) {
                            // closed at the test's end
                        }
                    },
                    "undrained-writer");
            writer.setDaemon(true);
            writer.start();

            ConnectionDumpReader.await(
                    node,
                    clientId,
                    "its oldest response's write incomplete with another held behind it",
                    WINDOW,
                    c -> c.getOrDefault("waiting", "").contains("undrained"));
            assertTrue(KpipeJmx.kpipe(node, "wait-undrained-total") >= 1, "counted");
            // An undrained wait ends while the sockets' buffers still take the written response (the kernel's are
            // larger than asked); once both are full it lasts: await that, then the connection as it stays.
            long readAtDetection = awaitEndOffsetSettled(cluster, RAW);
            Map<String, String> undrained = ConnectionDumpReader.await(
                    node,
                    clientId,
                    "undrained, its sockets full",
                    WINDOW,
                    c -> c.getOrDefault("waiting", "").contains("undrained"));
            int inflight = Integer.parseInt(undrained.get("inflight.requests"));
            int held = Integer.parseInt(undrained.get("held.responses"));
            assertTrue(held >= 1 && held <= 2, "responses held: " + undrained);
            assertTrue(inflight <= 3, "requests in flight, far below the limit of 16: " + undrained);

            // The good producer, on its own connection, while the raw one stays unread.
            Map<String, Object> props = new HashMap<>(cluster.clientConfig());
            props.put(ProducerConfig.CLIENT_ID_CONFIG, "undrained-good");
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            CountDownLatch acked = new CountDownLatch(GOOD_RECORDS);
            AtomicInteger errors = new AtomicInteger();
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < GOOD_RECORDS; i++) {
                    producer.send(new ProducerRecord<>(GOOD, 0, null, new byte[1024]), (m, e) -> {
                        if (e != null) {
                            errors.incrementAndGet();
                        }
                        acked.countDown();
                    });
                }
                assertTrue(acked.await(WINDOW.toSeconds(), TimeUnit.SECONDS), "the good producer's acknowledgements");
            }
            assertEquals(0, errors.get(), "the good producer's errors");
            assertEquals(GOOD_RECORDS, endOffset(cluster, GOOD), "the good producer's records stored");

            long readAfter = endOffset(cluster, RAW);
            assertTrue(
                    readAfter - readAtDetection <= 1,
                    "requests kpipe read from the undrained connection while the good producer ran: "
                            + (readAfter - readAtDetection) + " (at most one)");
            assertTrue(
                    written.get() > readAfter,
                    "the client wrote more than kpipe read: written " + written.get() + ", read " + readAfter);
            System.out.println("UndrainedConnectionIT: written " + written.get() + ", read at detection "
                    + readAtDetection + ", read after " + readAfter + "; at detection: " + undrained);
            Map<String, String> still = ConnectionDumpReader.await(
                    node,
                    clientId,
                    "still undrained",
                    WINDOW,
                    c -> c.getOrDefault("waiting", "").contains("undrained"));
            assertTrue(Integer.parseInt(still.get("inflight.requests")) <= 3, still.toString());
        }
    }

    /**
     * @return the topic's end offset once it did not move over a second (kpipe reads the raw connection no further),
     *     within {@link #WINDOW}
     */
    private static long awaitEndOffsetSettled(Cluster cluster, String topic) throws Exception {
        long deadline = System.nanoTime() + WINDOW.toNanos();
        long last = endOffset(cluster, topic);
        while (System.nanoTime() < deadline) {
            Thread.sleep(1_000); // a settled offset is one that a second did not move
            long now = endOffset(cluster, topic);
            if (now == last) {
                return now;
            }
            last = now;
        }
        throw new AssertionError("kpipe kept reading the connection that never reads for " + WINDOW + ": " + last);
    }

    private static long endOffset(Cluster cluster, String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        return cluster.admin()
                .listOffsets(Map.of(tp, OffsetSpec.latest()))
                .partitionResult(tp)
                .get(30, TimeUnit.SECONDS)
                .offset();
    }
}
