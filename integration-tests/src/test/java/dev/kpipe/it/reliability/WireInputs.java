// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

/** Kafka wire frames for the reliability tests: valid requests, and the pieces of invalid ones. */
public final class WireInputs {
    private WireInputs() {}

    /** @return a size-prefixed frame holding the request with its header */
    public static byte[] frame(AbstractRequest request, int correlationId, String clientId) {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId, correlationId);
        ByteBuffer body = request.serializeWithHeader(header);
        return sizePrefixed(body);
    }

    /** @return the bytes with a 4-byte size prefix */
    static byte[] sizePrefixed(ByteBuffer payload) {
        ByteBuffer out = ByteBuffer.allocate(4 + payload.remaining());
        out.putInt(payload.remaining()).put(payload.duplicate());
        return out.array();
    }

    /** @return the bytes with a 4-byte size prefix */
    static byte[] sizePrefixed(byte[] payload) {
        return sizePrefixed(ByteBuffer.wrap(payload));
    }

    /**
     * A request header as Kafka's v1 and v2 request headers start (api key, version, correlation id, client id), for
     * any api key and version, valid or not; v2 (flexible versions) also has an empty tagged-field section, written
     * when {@code flexible}.
     */
    static byte[] header(short apiKey, short version, int correlationId, String clientId, boolean flexible) {
        byte[] id = clientId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + 4 + 2 + id.length + (flexible ? 1 : 0));
        b.putShort(apiKey)
                .putShort(version)
                .putInt(correlationId)
                .putShort((short) id.length)
                .put(id);
        if (flexible) {
            b.put((byte) 0);
        }
        return b.array();
    }

    /** @return a size-prefixed frame: the header then the body bytes */
    static byte[] frame(byte[] header, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(header.length + body.length);
        b.put(header).put(body).flip();
        return sizePrefixed(b);
    }

    /** @return a PRODUCE v12 (topics by name) of one record to the partition */
    static ProduceRequest produce(String topic, int partition, short acks, String value) {
        return produce(topic, partition, acks, (short) 12, value);
    }

    /** @return a PRODUCE of the version (12: topics by name) of one record to the partition */
    public static ProduceRequest produce(String topic, int partition, short acks, short version, String value) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData()
                .setName(topic)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(partition)
                        .setRecords(MemoryRecords.withRecords(
                                Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8))))));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(t);
        ProduceRequestData data =
                new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000).setTopicData(topics);
        return new ProduceRequest.Builder(version, version, data).build(version);
    }

    /** @return a METADATA v12 for the topics */
    public static MetadataRequest metadata(List<String> topics) {
        return new MetadataRequest.Builder(topics, false).build((short) 12);
    }

    /** @return whether request header v2 (flexible) is used for the API at that version */
    static boolean flexibleHeader(ApiKeys api, short version) {
        return api.requestHeaderVersion(version) >= 2;
    }

    /**
     * A response as the differential tests compare it: correlation id, API and error counts (not offsets, throttle
     * times or addresses); {@code <id>:unexpected:<n> bytes} for a correlation id not in {@code apis}.
     *
     * @param frame a response frame without its size prefix
     * @param apis the API of each request answered, by correlation id
     * @param versions the version of each request answered, by correlation id
     */
    public static String describe(byte[] frame, Map<Integer, ApiKeys> apis, Map<Integer, Short> versions) {
        ByteBuffer buf = ByteBuffer.wrap(frame);
        int correlationId = buf.getInt(0);
        ApiKeys api = apis.get(correlationId);
        if (api == null) {
            return correlationId + ":unexpected:" + frame.length + " bytes";
        }
        short version = versions.get(correlationId);
        ResponseHeader.parse(buf, api.responseHeaderVersion(version));
        AbstractResponse r = AbstractResponse.parseResponse(api, new ByteBufferAccessor(buf), version);
        return correlationId + ":" + api + ":" + new TreeMap<>(r.errorCounts());
    }
}
