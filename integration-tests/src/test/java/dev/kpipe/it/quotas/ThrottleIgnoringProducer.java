// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.quotas;

import dev.kpipe.it.wire.BrokerApiVersions;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

/**
 * A raw wire-protocol producer that does <b>not</b> honour KIP-219: it ignores {@code throttle_time_ms}
 * and keeps up to {@code maxOutstanding} requests written ahead of their responses (one writer and one
 * reader thread on one socket). Against such a client only the broker's muting of the throttled
 * connection holds it to its quota, so it observes whether kpipe keeps a throttled pipelined
 * connection muted as Kafka keeps a throttled classic one.
 *
 * <p>The requests are PRODUCE acks=1, one batch each, record keys the big-endian sequence numbers 0, 1,
 * 2, ... in send order; every {@code exclusiveEvery}-th request is a LIST_OFFSETS instead, which kpipe
 * handles classically: it drains the pipelined connection (waiting for every earlier response and for
 * the open throttle windows), hands it back to Kafka's own mute state machine, and the next produce
 * upgrades it again, so throttle windows and hand-overs interleave. Every response must answer the
 * request sent in the same position (correlation ids in order) without error.
 */
final class ThrottleIgnoringProducer {

    /**
     * @param requests requests answered (produce and list-offsets)
     * @param records records acknowledged
     * @param listOffsets list-offsets requests answered
     * @param throttledResponses responses that carried a non-zero {@code throttle_time_ms} (ignored)
     * @param maxThrottleMs the largest {@code throttle_time_ms} seen
     */
    record Result(long requests, long records, long listOffsets, long throttledResponses, long maxThrottleMs) {}

    private static final short PRODUCE_VERSION = // by topic name; v11 on 3.8/3.9
            BrokerApiVersions.harnessDefault().upTo(ApiKeys.PRODUCE, (short) 12);
    private static final short LIST_OFFSETS_VERSION =
            BrokerApiVersions.harnessDefault().upTo(ApiKeys.LIST_OFFSETS, (short) 9);

    private ThrottleIgnoringProducer() {}

    /**
     * Sends for {@code duration}, then waits for the outstanding responses.
     *
     * @param port the broker's PLAINTEXT port on 127.0.0.1
     * @param clientId the client id of every request
     * @param topic the topic (partition 0)
     * @param duration how long to keep sending
     * @param maxOutstanding requests written and not yet answered, at most
     * @param recordsPerRequest records per batch
     * @param valueSize value bytes per record
     * @param exclusiveEvery every how many requests one is a LIST_OFFSETS; 0 for none
     * @return what was acknowledged
     * @throws Exception on I/O errors; AssertionError on an error code, a response out of order, or
     *     responses missing 60 s after sending stopped
     */
    static Result run(
            int port,
            String clientId,
            String topic,
            Duration duration,
            int maxOutstanding,
            int recordsPerRequest,
            int valueSize,
            int exclusiveEvery)
            throws Exception {
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            socket.setSoTimeout(60_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            Semaphore permits = new Semaphore(maxOutstanding);
            ConcurrentLinkedQueue<int[]> outstanding = new ConcurrentLinkedQueue<>(); // {correlation id, api key}
            AtomicLong answered = new AtomicLong();
            AtomicLong listOffsets = new AtomicLong();
            AtomicLong throttled = new AtomicLong();
            AtomicLong maxThrottle = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long[] sent = {0};
            Thread reader = new Thread(
                    () -> {
                        try {
                            while (!Thread.currentThread().isInterrupted()) {
                                int size = in.readInt();
                                byte[] bytes = new byte[size];
                                in.readFully(bytes);
                                int[] expected = outstanding.poll();
                                if (expected == null) {
                                    throw new AssertionError("response without a request");
                                }
                                ApiKeys api = ApiKeys.forId(expected[1]);
                                short version = api == ApiKeys.PRODUCE ? PRODUCE_VERSION : LIST_OFFSETS_VERSION;
                                ByteBuffer buf = ByteBuffer.wrap(bytes);
                                ResponseHeader header = ResponseHeader.parse(buf, api.responseHeaderVersion(version));
                                if (header.correlationId() != expected[0]) {
                                    throw new AssertionError("response " + header.correlationId() + " where "
                                            + expected[0] + " (" + api + ") was due");
                                }
                                AbstractResponse r =
                                        AbstractResponse.parseResponse(api, new ByteBufferAccessor(buf), version);
                                if (r instanceof ProduceResponse pr) {
                                    pr.data()
                                            .responses()
                                            .forEach(t -> t.partitionResponses()
                                                    .forEach(p -> check(p.errorCode(), "produce", failure)));
                                } else {
                                    ((ListOffsetsResponse) r)
                                            .data()
                                            .topics()
                                            .forEach(t -> t.partitions()
                                                    .forEach(p -> check(p.errorCode(), "list-offsets", failure)));
                                    listOffsets.incrementAndGet();
                                }
                                if (r.throttleTimeMs() > 0) {
                                    throttled.incrementAndGet();
                                    maxThrottle.accumulateAndGet(r.throttleTimeMs(), Math::max);
                                }
                                answered.incrementAndGet();
                                permits.release(); // throttle_time_ms deliberately ignored
                            }
                        } catch (IOException e) {
                            if (!socket.isClosed()) {
                                failure.compareAndSet(null, e);
                            }
                        } catch (RuntimeException | AssertionError e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "throttle-ignoring-reader-" + clientId);
            reader.setDaemon(true);
            reader.start();

            long deadline = System.nanoTime() + duration.toNanos();
            int seq = 0;
            while (System.nanoTime() < deadline && failure.get() == null) {
                if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                AbstractRequest request;
                if (exclusiveEvery > 0 && sent[0] % exclusiveEvery == exclusiveEvery - 1) {
                    request = ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                            .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                                    .setName(topic)
                                    .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                                            .setPartitionIndex(0)
                                            .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
                            .build(LIST_OFFSETS_VERSION);
                } else {
                    SimpleRecord[] records = new SimpleRecord[recordsPerRequest];
                    for (int i = 0; i < recordsPerRequest; i++) {
                        records[i] = new SimpleRecord(
                                ByteBuffer.allocate(4).putInt(0, seq).array(), QuotaLoad.value(seq, valueSize));
                        seq++;
                    }
                    ProduceRequestData.TopicProduceDataCollection topics =
                            new ProduceRequestData.TopicProduceDataCollection();
                    topics.add(new ProduceRequestData.TopicProduceData()
                            .setName(topic)
                            .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                                    .setIndex(0)
                                    .setRecords(MemoryRecords.withRecords(Compression.NONE, records)))));
                    request = new ProduceRequest.Builder(
                                    PRODUCE_VERSION,
                                    PRODUCE_VERSION,
                                    new ProduceRequestData()
                                            .setAcks((short) 1)
                                            .setTimeoutMs(30_000)
                                            .setTopicData(topics))
                            .build(PRODUCE_VERSION);
                }
                int correlationId = (int) sent[0];
                ByteBuffer frame = request.serializeWithHeader(
                        new RequestHeader(request.apiKey(), request.version(), clientId, correlationId));
                outstanding.add(new int[] {correlationId, request.apiKey().id});
                out.writeInt(frame.remaining());
                out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
                out.flush();
                sent[0]++;
            }
            // Every written request is answered (the broker may still be holding some back for the quota).
            long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (answered.get() < sent[0] && failure.get() == null && System.nanoTime() < waitUntil) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
            reader.interrupt();
            if (failure.get() != null) {
                throw new AssertionError("throttle-ignoring producer failed", failure.get());
            }
            if (answered.get() != sent[0]) {
                throw new AssertionError(answered.get() + " of " + sent[0] + " requests answered after 60 s");
            }
            return new Result(answered.get(), seq, listOffsets.get(), throttled.get(), maxThrottle.get());
        }
    }

    private static void check(short errorCode, String what, AtomicReference<Throwable> failure) {
        if (errorCode != Errors.NONE.code()) {
            failure.compareAndSet(null, new AssertionError(what + " error " + Errors.forCode(errorCode)));
        }
    }
}
