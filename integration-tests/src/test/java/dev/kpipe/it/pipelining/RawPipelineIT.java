// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.wire.BrokerApiVersions;
import dev.kpipe.it.wire.RawKafkaConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Raw wire protocol against a kpipe broker: one connection, hundreds of requests written back to
 * back without waiting, random non-monotonic correlation ids, PRODUCE acks -1/1/0 (by name, v12,
 * and by topic id, v13), METADATA, API_VERSIONS, LIST_OFFSETS and PRODUCE to a topic the policy
 * excludes (both exclusive: downgrade with drain, then upgrade again). Every response must arrive in
 * request order with its own correlation id, the connection must stay open, and the records must be
 * stored once each, in order.
 */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(
        nodes = 1,
        brokerConfig = {"num.io.threads=8", "kpipe.topics.exclude=excluded.*"})
class RawPipelineIT {

    private static final String TOPIC = "raw-pipeline";
    private static final String EXCLUDED = "excluded-raw";
    private static final int PARTITIONS = 3;
    private static final int REQUESTS = 400;

    private record Sent(
            int correlationId,
            ApiKeys api,
            short version,
            boolean expectsResponse,
            String topic,
            int partition,
            int seq) {}

    @Test
    void responsesArriveInRequestOrderAndRecordsAreStoredInOrder(Cluster cluster) throws Exception {
        cluster.createTopics(
                List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1), new NewTopic(EXCLUDED, 1, (short) 1)),
                Duration.ofSeconds(60));
        Uuid topicId = cluster.admin()
                .describeTopics(List.of(TOPIC))
                .allTopicNames()
                .get()
                .get(TOPIC)
                .topicId();
        KafkaNode node = cluster.node(1);
        double upgradesBefore = KpipeJmx.kpipe(node, "upgrade-total");
        double downgradesBefore = KpipeJmx.kpipe(node, "downgrade-total");

        // The newest versions this broker and the test's clients share: produce v12 (names) and v13 (topic ids) mixed
        // where the broker accepts v13 (4.1+), else its newest (v11 on 3.8/3.9, v12 on 4.0) for every produce.
        BrokerApiVersions versions = BrokerApiVersions.of("127.0.0.1", node.port());
        short produceByName = versions.upTo(ApiKeys.PRODUCE, (short) 12);
        short produceById = versions.upTo(ApiKeys.PRODUCE, (short) 13);
        short metadataVersion = versions.upTo(ApiKeys.METADATA, (short) 12);
        short listOffsetsVersion = versions.upTo(ApiKeys.LIST_OFFSETS, (short) 9);

        Random random = new Random(42);
        List<Sent> sent = new ArrayList<>();
        Set<Integer> usedIds = new HashSet<>();
        Map<Integer, Integer> nextSeq = new HashMap<>();
        try (RawKafkaConnection conn =
                new RawKafkaConnection("127.0.0.1", node.port(), "raw-pipeline", Duration.ofSeconds(60))) {
            for (int i = 0; i < REQUESTS; i++) {
                int correlationId;
                do {
                    correlationId = random.nextInt(); // any int, never contiguous or monotonic
                } while (!usedIds.add(correlationId));
                int kind = random.nextInt(20);
                Sent s;
                AbstractRequest request;
                if (kind < 13) {
                    short acks = switch (kind % 3) {
                        case 0 -> (short) -1;
                        case 1 -> (short) 1;
                        default -> (short) 0;
                    };
                    short version = kind < 7 ? produceByName : produceById;
                    int partition = random.nextInt(PARTITIONS);
                    int seq = nextSeq.merge(partition, 1, Integer::sum) - 1;
                    request = produce(
                            TOPIC,
                            version >= 13 ? topicId : null,
                            partition,
                            acks,
                            version,
                            "p" + partition + "-" + seq);
                    s = new Sent(correlationId, ApiKeys.PRODUCE, version, acks != 0, TOPIC, partition, seq);
                } else if (kind < 15) {
                    request = new MetadataRequest.Builder(List.of(TOPIC), false).build(metadataVersion);
                    s = new Sent(correlationId, ApiKeys.METADATA, metadataVersion, true, null, -1, -1);
                } else if (kind < 17) {
                    request = new ApiVersionsRequest.Builder().build((short) 3);
                    s = new Sent(correlationId, ApiKeys.API_VERSIONS, (short) 3, true, null, -1, -1);
                } else if (kind < 19) {
                    request = ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                            .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                                    .setName(TOPIC)
                                    .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                                            .setPartitionIndex(0)
                                            .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
                            .build(listOffsetsVersion);
                    s = new Sent(correlationId, ApiKeys.LIST_OFFSETS, listOffsetsVersion, true, null, -1, -1);
                } else {
                    request = produce(EXCLUDED, null, 0, (short) 1, produceByName, "x" + i);
                    s = new Sent(correlationId, ApiKeys.PRODUCE, produceByName, true, EXCLUDED, 0, -1);
                }
                conn.send(correlationId, request);
                sent.add(s);
            }

            List<Integer> expected = new ArrayList<>();
            List<Integer> received = new ArrayList<>();
            for (Sent s : sent) {
                if (!s.expectsResponse()) {
                    continue;
                }
                expected.add(s.correlationId());
                RawKafkaConnection.Received r = conn.receive(s.api(), s.version());
                received.add(r.correlationId());
                assertEquals(
                        s.correlationId(),
                        r.correlationId(),
                        "response " + received.size() + " answers the wrong request; order so far " + received);
                if (r.response() instanceof ProduceResponse pr) {
                    pr.data()
                            .responses()
                            .forEach(t -> t.partitionResponses()
                                    .forEach(p -> assertEquals(
                                            Errors.NONE.code(),
                                            p.errorCode(),
                                            "produce error " + Errors.forCode(p.errorCode()))));
                }
            }
            assertEquals(expected, received);

            // The connection is still open and usable.
            conn.send(7, new MetadataRequest.Builder(List.of(TOPIC), false).build(metadataVersion));
            assertEquals(7, conn.receive(ApiKeys.METADATA, metadataVersion).correlationId());
        }

        assertTrue(KpipeJmx.kpipe(node, "upgrade-total") > upgradesBefore, "the connection was pipelined");
        assertTrue(KpipeJmx.kpipe(node, "downgrade-total") > downgradesBefore, "exclusive requests downgraded it");
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");

        // Every produced record is stored once, in per-partition order (acks=0 ones included).
        Map<Integer, List<String>> stored = consumeAll(cluster);
        for (int p = 0; p < PARTITIONS; p++) {
            List<String> want = new ArrayList<>();
            for (int seq = 0; seq < nextSeq.getOrDefault(p, 0); seq++) {
                want.add("p" + p + "-" + seq);
            }
            assertEquals(want, stored.getOrDefault(p, List.of()), "partition " + p);
        }
        assertFalse(stored.isEmpty());
    }

    private static ProduceRequest produce(
            String topic, Uuid topicId, int partition, short acks, short version, String value) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData();
        if (topicId != null) {
            t.setTopicId(topicId);
        } else {
            t.setName(topic);
        }
        t.setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                .setIndex(partition)
                .setRecords(MemoryRecords.withRecords(
                        Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8))))));
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(t);
        ProduceRequestData data =
                new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000).setTopicData(topics);
        return new ProduceRequest.Builder(version, version, data).build(version);
    }

    /** @return the values of every record of {@link #TOPIC}, per partition in offset order */
    private static Map<Integer, List<String>> consumeAll(Cluster cluster) {
        Map<Integer, List<String>> out = new HashMap<>();
        RecordReadBack.readToEnd(
                cluster,
                TOPIC,
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer(),
                Duration.ofSeconds(60),
                r -> out.computeIfAbsent(r.partition(), k -> new ArrayList<>())
                        .add(new String(r.value(), StandardCharsets.UTF_8)));
        return out;
    }
}
