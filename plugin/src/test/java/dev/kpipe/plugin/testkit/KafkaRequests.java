// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.testkit;

import dev.kpipe.plugin.classify.TopicPolicy;
import dev.kpipe.spi.TopicNames;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.PushTelemetryRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.PushTelemetryRequest;
import org.apache.kafka.common.requests.RequestAndSize;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * Real kafka-clients requests, serialized with their header and parsed back exactly as a broker's
 * {@code Processor} does ({@link RequestHeader#parse}, then {@link RequestContext#parseRequest}).
 */
public final class KafkaRequests {

    /** A topic the test policy pipelines. */
    public static final String INCLUDED = "orders";
    /** A second topic the test policy pipelines. */
    public static final String INCLUDED_2 = "payments";
    /** A topic the test policy excludes ({@link #EXCLUDE_REGEX}). */
    public static final String EXCLUDED = "excluded-audit";
    /** The exclude regex of {@link #policy()}. */
    public static final String EXCLUDE_REGEX = "excluded-.*";

    public static final Uuid INCLUDED_ID = new Uuid(0x1111L, 0x2222L);
    public static final Uuid INCLUDED_2_ID = new Uuid(0x3333L, 0x4444L);
    public static final Uuid EXCLUDED_ID = new Uuid(0x5555L, 0x6666L);
    /** A topic id no broker knows. */
    public static final Uuid UNKNOWN_ID = new Uuid(0x7777L, 0x8888L);
    /** The resolver of the test broker's metadata: knows the three topics above. */
    public static final TopicNames TOPIC_NAMES =
            id -> Map.of(INCLUDED_ID, INCLUDED, INCLUDED_2_ID, INCLUDED_2, EXCLUDED_ID, EXCLUDED)
                    .get(id);
    /** The last PRODUCE version that names topics (v13 names them by id). */
    public static final short PRODUCE_BY_NAME = 12;

    public static final short PRODUCE_BY_ID = 13;

    private KafkaRequests() {}

    /** @return include everything, exclude {@link #EXCLUDE_REGEX} (internal topics are never pipelined) */
    public static TopicPolicy policy() {
        return new TopicPolicy(Pattern.compile(".*"), Pattern.compile(EXCLUDE_REGEX));
    }

    /** A request as the broker sees it after reading it. */
    public record Parsed(RequestContext context, AbstractRequest body, int sizeInBytes) {
        public ApiKeys apiKey() {
            return context.header.apiKey();
        }
    }

    /**
     * @param connectionId the broker-side connection id
     * @param correlationId the header's correlation id
     * @param builder the request
     * @param version the version to serialize at
     * @return the request parsed back as the broker parses it
     */
    public static Parsed parse(
            String connectionId, int correlationId, AbstractRequest.Builder<?> builder, short version) {
        AbstractRequest request = builder.build(version);
        RequestHeader header = new RequestHeader(builder.apiKey(), version, "client-" + connectionId, correlationId);
        ByteBuffer wire = request.serializeWithHeader(header);
        int size = wire.remaining();
        RequestHeader parsedHeader = RequestHeader.parse(wire);
        RequestContext context = new RequestContext(
                parsedHeader,
                connectionId,
                InetAddress.getLoopbackAddress(),
                Optional.of(50_000),
                KafkaPrincipal.ANONYMOUS,
                ListenerName.normalised("PLAINTEXT"),
                SecurityProtocol.PLAINTEXT,
                ClientInformation.EMPTY,
                false);
        RequestAndSize body = context.parseRequest(wire);
        return new Parsed(context, body.request, size);
    }

    /** One topic of a produce request: by name (PRODUCE v3-12) or by id (v13+). */
    public record Topic(String name, Uuid id) {
        public static Topic named(String name) {
            return new Topic(name, Uuid.ZERO_UUID);
        }

        public static Topic byId(Uuid id) {
            return new Topic("", id);
        }
    }

    /**
     * @param acks -1, 0 or 1
     * @param transactionalId or {@code null}
     * @param topics the topics, one partition each
     * @return a produce request builder
     */
    public static ProduceRequest.Builder produce(short acks, String transactionalId, List<Topic> topics) {
        ProduceRequestData.TopicProduceDataCollection data = new ProduceRequestData.TopicProduceDataCollection();
        for (Topic t : topics) {
            MemoryRecords records = MemoryRecords.withRecords(
                    Compression.NONE, new SimpleRecord(("v-" + t.name()).getBytes(StandardCharsets.UTF_8)));
            data.add(new ProduceRequestData.TopicProduceData()
                    .setName(t.name())
                    .setTopicId(t.id())
                    .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                            .setIndex(0)
                            .setRecords(records))));
        }
        return new ProduceRequest.Builder(
                ApiKeys.PRODUCE.oldestVersion(),
                ApiKeys.PRODUCE.latestVersion(),
                new ProduceRequestData()
                        .setAcks(acks)
                        .setTimeoutMs(30_000)
                        .setTransactionalId(transactionalId)
                        .setTopicData(data));
    }

    public static Parsed produce(
            String connectionId,
            int correlationId,
            short acks,
            String transactionalId,
            boolean byId,
            String... topicNames) {
        List<Topic> topics = java.util.Arrays.stream(topicNames)
                .map(n -> byId ? Topic.byId(idOf(n)) : Topic.named(n))
                .toList();
        return parse(
                connectionId,
                correlationId,
                produce(acks, transactionalId, topics),
                byId ? PRODUCE_BY_ID : PRODUCE_BY_NAME);
    }

    public static Uuid idOf(String topic) {
        return switch (topic) {
            case INCLUDED -> INCLUDED_ID;
            case INCLUDED_2 -> INCLUDED_2_ID;
            case EXCLUDED -> EXCLUDED_ID;
            default -> UNKNOWN_ID;
        };
    }

    public static Parsed metadata(String connectionId, int correlationId) {
        return parse(
                connectionId,
                correlationId,
                new MetadataRequest.Builder(List.of(INCLUDED), false),
                ApiKeys.METADATA.latestVersion());
    }

    public static Parsed apiVersions(String connectionId, int correlationId) {
        return parse(
                connectionId, correlationId, new ApiVersionsRequest.Builder(), ApiKeys.API_VERSIONS.latestVersion());
    }

    public static Parsed fetch(String connectionId, int correlationId) {
        return parse(
                connectionId,
                correlationId,
                FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 500, 1, Map.of()),
                ApiKeys.FETCH.latestVersion());
    }

    public static Parsed getTelemetrySubscriptions(String connectionId, int correlationId) {
        return parse(
                connectionId,
                correlationId,
                new GetTelemetrySubscriptionsRequest.Builder(new GetTelemetrySubscriptionsRequestData()),
                ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS.latestVersion());
    }

    public static Parsed pushTelemetry(String connectionId, int correlationId) {
        return parse(
                connectionId,
                correlationId,
                new PushTelemetryRequest.Builder(new PushTelemetryRequestData().setClientInstanceId(Uuid.ONE_UUID)),
                ApiKeys.PUSH_TELEMETRY.latestVersion());
    }

    /** @return a {@code SASL_HANDSHAKE} v1 for SCRAM-SHA-512, as a client sends it to start re-authentication */
    public static Parsed saslHandshake(String connectionId, int correlationId) {
        return parse(
                connectionId,
                correlationId,
                new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512")),
                (short) 1);
    }

    /** @return an OFFSET_COMMIT of group {@code group} for partition 0 of {@link #INCLUDED}, as a consumer sends it */
    public static Parsed offsetCommit(String connectionId, int correlationId, long offset) {
        OffsetCommitRequestData data = new OffsetCommitRequestData()
                .setGroupId("group")
                .setMemberId("member-1")
                .setGenerationIdOrMemberEpoch(1)
                .setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic()
                        .setName(INCLUDED)
                        .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                                .setPartitionIndex(0)
                                .setCommittedOffset(offset)))));
        return parse(connectionId, correlationId, OffsetCommitRequest.Builder.forTopicNames(data), (short) 9);
    }

    /** @return a TXN_OFFSET_COMMIT of producer {@code txn-1} for group {@code group}, as an exactly-once producer sends it */
    public static Parsed txnOffsetCommit(String connectionId, int correlationId, long offset) {
        TxnOffsetCommitRequestData data = new TxnOffsetCommitRequestData()
                .setTransactionalId("txn-1")
                .setGroupId("group")
                .setProducerId(7L)
                .setProducerEpoch((short) 0)
                .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic()
                        .setName(INCLUDED)
                        .setPartitions(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                .setPartitionIndex(0)
                                .setCommittedOffset(offset)))));
        return parse(connectionId, correlationId, TxnOffsetCommitRequest.Builder.forTopicNames(data, false), (short) 3);
    }

    public static Parsed findCoordinator(String connectionId, int correlationId) {
        return parse(
                connectionId,
                correlationId,
                new FindCoordinatorRequest.Builder(
                        new FindCoordinatorRequestData().setCoordinatorKeys(List.of("group"))),
                ApiKeys.FIND_COORDINATOR.latestVersion());
    }
}
