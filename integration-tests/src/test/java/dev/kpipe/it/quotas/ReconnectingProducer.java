// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.quotas;

import dev.kpipe.it.wire.BrokerApiVersions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * A raw wire-protocol producer that never reads its responses and, when the broker stops reading it (its socket
 * buffers full, or its connection muted for a throttle), connects anew: the slow reader of issue #33's S9 scenario.
 * {@code connections} writer threads, each on one socket at a time, write PRODUCE acks=all requests of one record of
 * {@code valueSize} bytes, all with one client id; a socket on which no byte could be written for {@code stall} is
 * closed and replaced. Only the broker's reads hold such a client: stock Kafka reads one request of a new connection
 * and mutes it for its throttle time (KIP-219).
 */
final class ReconnectingProducer {

    /**
     * @param connections sockets opened in all
     * @param requests requests written whole
     */
    record Result(long connections, long requests) {}

    private static final short PRODUCE_VERSION =
            BrokerApiVersions.harnessDefault().upTo(ApiKeys.PRODUCE, (short) 12);

    private ReconnectingProducer() {}

    /**
     * @param port the broker's PLAINTEXT port on 127.0.0.1
     * @param clientId the client id of every request
     * @param topic the topic (partition 0)
     * @param duration how long to keep writing
     * @param threads writer threads (sockets open at a time)
     * @param valueSize value bytes of the one record of each request
     * @param stall how long a socket may take no byte before it is replaced
     * @return what was written
     * @throws Exception on an I/O error other than a closed connection
     */
    static Result run(
            String clientId, int port, String topic, Duration duration, int threads, int valueSize, Duration stall)
            throws Exception {
        AtomicLong connections = new AtomicLong();
        AtomicLong requests = new AtomicLong();
        long deadline = System.nanoTime() + duration.toNanos();
        List<Thread> writers = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(
                    () -> {
                        try {
                            write(clientId, port, topic, deadline, valueSize, stall, connections, requests);
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    },
                    "reconnecting-producer-" + t);
            w.start();
            writers.add(w);
        }
        for (Thread w : writers) {
            w.join();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("reconnecting producer failed", failures.get(0));
        }
        return new Result(connections.get(), requests.get());
    }

    private static void write(
            String clientId,
            int port,
            String topic,
            long deadline,
            int valueSize,
            Duration stall,
            AtomicLong connections,
            AtomicLong requests)
            throws Exception {
        int correlationId = 0;
        while (System.nanoTime() < deadline) {
            try (SocketChannel ch = SocketChannel.open()) {
                ch.setOption(StandardSocketOptions.SO_SNDBUF, 32 * 1024);
                ch.setOption(StandardSocketOptions.SO_RCVBUF, 8 * 1024); // responses are never read
                ch.connect(new InetSocketAddress("127.0.0.1", port));
                ch.configureBlocking(false);
                connections.incrementAndGet();
                long lastProgress = System.nanoTime();
                ByteBuffer frame = null;
                while (System.nanoTime() < deadline) {
                    if (frame == null || !frame.hasRemaining()) {
                        if (frame != null) {
                            requests.incrementAndGet();
                        }
                        frame = frame(clientId, topic, correlationId++, valueSize);
                    }
                    int n;
                    try {
                        n = ch.write(frame);
                    } catch (IOException closedByBroker) {
                        break;
                    }
                    long now = System.nanoTime();
                    if (n > 0) {
                        lastProgress = now;
                    } else if (now - lastProgress >= stall.toNanos()) {
                        break; // the broker stopped reading it: connect anew
                    } else {
                        TimeUnit.MILLISECONDS.sleep(2);
                    }
                }
            }
        }
    }

    private static ByteBuffer frame(String clientId, String topic, int correlationId, int valueSize) {
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData()
                .setName(topic)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(0)
                        .setRecords(MemoryRecords.withRecords(
                                Compression.NONE,
                                new SimpleRecord(null, QuotaLoad.value(correlationId, valueSize)))))));
        ProduceRequest request = new ProduceRequest.Builder(
                        PRODUCE_VERSION,
                        PRODUCE_VERSION,
                        new ProduceRequestData()
                                .setAcks((short) -1)
                                .setTimeoutMs(30_000)
                                .setTopicData(topics))
                .build(PRODUCE_VERSION);
        ByteBuffer body = request.serializeWithHeader(
                new RequestHeader(ApiKeys.PRODUCE, PRODUCE_VERSION, clientId, correlationId));
        ByteBuffer out = ByteBuffer.allocate(4 + body.remaining());
        out.putInt(body.remaining()).put(body).flip();
        return out;
    }
}
