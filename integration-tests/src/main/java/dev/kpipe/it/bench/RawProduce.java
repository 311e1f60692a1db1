// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Produce requests as they go on the wire, built with Kafka's own classes for the raw-socket scenarios (S9's slow
 * readers, S10's connections): one record batch (magic 2, not idempotent, not compressed) for one partition, framed
 * with its 4-byte size. PRODUCE v9: topics by name, the first flexible version, accepted by every broker the harness
 * runs (3.7 to 4.4). Stateless.
 */
final class RawProduce {
    /** The PRODUCE version sent. */
    static final short VERSION = 9;
    /** Where the correlation id sits in a framed request: size (4), api key (2), api version (2). */
    static final int CORRELATION_ID_OFFSET = 8;
    /** The {@code client.id} of every raw request's header. */
    static final String CLIENT_ID = "kpipe-bench-raw";

    private RawProduce() {}

    /**
     * @param topic the topic, by name
     * @param partition the partition
     * @param acks -1 (all), 1 or 0
     * @param records records in the batch, at least 1
     * @param valueBytes each record's value size, bytes
     * @return a framed request (size prefix, header with correlation id 0, body), positioned at 0; its correlation id
     *     can be changed in place with {@link #setCorrelationId}
     */
    static ByteBuffer request(String topic, int partition, short acks, int records, int valueBytes) {
        return request(topic, partition, acks, records, valueBytes, CLIENT_ID);
    }

    /**
     * @param clientId the header's {@code client.id} (what Kafka's client-id quotas match)
     * @see #request(String, int, short, int, int)
     */
    static ByteBuffer request(String topic, int partition, short acks, int records, int valueBytes, String clientId) {
        byte[] value = new byte[valueBytes];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) ('a' + i % 26);
        }
        SimpleRecord[] batch = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            batch[i] = new SimpleRecord(value);
        }
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic);
        t.setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                .setIndex(partition)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, batch))));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(t);
        ProduceRequestData data =
                new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000).setTopicData(topics);
        ProduceRequest request = new ProduceRequest.Builder(VERSION, VERSION, data).build(VERSION);
        ByteBuffer body = request.serializeWithHeader(new RequestHeader(ApiKeys.PRODUCE, VERSION, clientId, 0));
        ByteBuffer framed = ByteBuffer.allocate(4 + body.remaining());
        framed.putInt(body.remaining()).put(body).flip();
        return framed;
    }

    /**
     * @param framed a request from {@link #request}
     * @param correlationId the id to write into its header
     */
    static void setCorrelationId(ByteBuffer framed, int correlationId) {
        framed.putInt(CORRELATION_ID_OFFSET, correlationId);
    }

    /**
     * @param body a response without its size prefix
     * @param correlationId the correlation id of the request it answers
     * @return the first error of any partition, or {@link Errors#NONE}
     * @throws IllegalStateException if the response answers another correlation id
     */
    static Errors responseError(ByteBuffer body, int correlationId) {
        ProduceResponse r = (ProduceResponse) AbstractResponse.parseResponse(body, header(correlationId));
        for (var t : r.data().responses()) {
            for (var p : t.partitionResponses()) {
                if (p.errorCode() != Errors.NONE.code()) {
                    return Errors.forCode(p.errorCode());
                }
            }
        }
        return Errors.NONE;
    }

    private static RequestHeader header(int correlationId) {
        return new RequestHeader(ApiKeys.PRODUCE, VERSION, CLIENT_ID, correlationId);
    }
}
