// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;

/** The raw scenarios' produce requests read back with Kafka's own parser, and their responses. No broker. */
class RawProduceTest {
    @Test
    void aRequestIsFramedWithItsSizeAndReadsBackAsOneBatchForOnePartition() {
        ByteBuffer framed = RawProduce.request("bench-s9-slow", 0, (short) -1, 30, 1024);
        assertEquals(framed.remaining() - 4, framed.getInt(0), "the size prefix counts header and body");
        RawProduce.setCorrelationId(framed, 77);
        ByteBuffer b = framed.duplicate();
        b.position(4);
        RequestHeader header = RequestHeader.parse(b);
        assertEquals(ApiKeys.PRODUCE, header.apiKey());
        assertEquals(RawProduce.VERSION, header.apiVersion());
        assertEquals(77, header.correlationId());
        assertEquals(RawProduce.CLIENT_ID, header.clientId());
        ProduceRequest request = ProduceRequest.parse(new ByteBufferAccessor(b), RawProduce.VERSION);
        assertEquals(-1, request.acks());
        var topic = request.data().topicData().iterator().next();
        assertEquals("bench-s9-slow", topic.name());
        var partition = topic.partitionData().get(0);
        assertEquals(0, partition.index());
        var records = (org.apache.kafka.common.record.internal.MemoryRecords) partition.records();
        int batches = 0;
        int count = 0;
        for (RecordBatch batch : records.batches()) {
            batches++;
            count += batch.countOrNull();
            assertEquals(RecordBatch.NO_PRODUCER_ID, batch.producerId(), "not idempotent");
        }
        assertEquals(1, batches);
        assertEquals(30, count);
    }

    @Test
    void aResponseErrorIsTheFirstPartitionError() {
        assertEquals(Errors.NONE, RawProduce.responseError(response(7, Errors.NONE), 7));
        assertEquals(
                Errors.NOT_LEADER_OR_FOLLOWER, RawProduce.responseError(response(8, Errors.NOT_LEADER_OR_FOLLOWER), 8));
        assertThrows(RuntimeException.class, () -> RawProduce.responseError(response(9, Errors.NONE), 10));
    }

    /** A produce response as the broker sends it, without the size prefix. */
    private static ByteBuffer response(int correlationId, Errors error) {
        ProduceResponseData data = new ProduceResponseData();
        ProduceResponseData.TopicProduceResponse t = new ProduceResponseData.TopicProduceResponse().setName("t");
        t.partitionResponses()
                .add(new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(0)
                        .setErrorCode(error.code()));
        data.responses().add(t);
        short headerVersion = ApiKeys.PRODUCE.responseHeaderVersion(RawProduce.VERSION);
        return RequestUtils.serialize(
                new ResponseHeader(correlationId, headerVersion).data(), headerVersion, data, RawProduce.VERSION);
    }
}
