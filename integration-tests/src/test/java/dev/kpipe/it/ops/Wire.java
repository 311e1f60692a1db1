// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.it.wire.BrokerApiVersions;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Hand-made requests for {@link RawKafkaConnection}, with the versions the tests read back, and the check of their
 * produce responses.
 */
final class Wire {
    /** PRODUCE version sent (topics by name). */
    static final short PRODUCE_VERSION = BrokerApiVersions.harnessDefault().upTo(ApiKeys.PRODUCE, (short) 12);
    /** LIST_OFFSETS version sent: an exclusive request (kpipe drains the connection before Kafka handles it). */
    static final short LIST_OFFSETS_VERSION = BrokerApiVersions.harnessDefault().upTo(ApiKeys.LIST_OFFSETS, (short) 9);

    private Wire() {}

    /**
     * @param topic topic name
     * @param partition partition
     * @param acks -1, 1 or 0
     * @param value the one record's value
     * @return a PRODUCE v12 of one record, not transactional
     */
    static ProduceRequest produce(String topic, int partition, short acks, byte[] value) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic);
        t.setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                .setIndex(partition)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value)))));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(t);
        ProduceRequestData data =
                new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000).setTopicData(topics);
        return new ProduceRequest.Builder(PRODUCE_VERSION, PRODUCE_VERSION, data).build(PRODUCE_VERSION);
    }

    /**
     * @param topic topic name
     * @return a LIST_OFFSETS v9 for the latest offset of partition 0
     */
    static ListOffsetsRequest listOffsets(String topic) {
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                        .setName(topic)
                        .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                                .setPartitionIndex(0)
                                .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
                .build(LIST_OFFSETS_VERSION);
    }

    /**
     * @param request a request
     * @param clientId the client id of its header
     * @param correlationId the correlation id of its header
     * @return its size as the broker accounts it (header and body, without the 4-byte size prefix)
     */
    static int sizeInBytes(ProduceRequest request, String clientId, int correlationId) {
        return request.serializeWithHeader(
                        new RequestHeader(request.apiKey(), request.version(), clientId, correlationId))
                .remaining();
    }

    /**
     * @param s text
     * @return its UTF-8 bytes (a record value)
     */
    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Asserts a PRODUCE response answers {@code correlationId} (responses come in request order) and has no error for
     * any partition.
     *
     * @param r what the connection received
     * @param correlationId the id of the request it must answer
     * @return the response
     */
    static ProduceResponse assertProduced(RawKafkaConnection.Received r, int correlationId) {
        assertEquals(correlationId, r.correlationId(), "responses in request order");
        ProduceResponse pr = (ProduceResponse) r.response();
        pr.data()
                .responses()
                .forEach(t -> t.partitionResponses()
                        .forEach(p -> assertEquals(
                                Errors.NONE.code(), p.errorCode(), "produce error " + Errors.forCode(p.errorCode()))));
        return pr;
    }
}
