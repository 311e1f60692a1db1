// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Java idempotent producer with 5 requests in flight against a slow-ack cluster (the follower
 * delays its fetches, so an acks=all produce waits for it): 200,000 records over several
 * partitions, each present once and in per-partition order, and kpipe saw more than one request in
 * flight on a connection.
 */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(
        nodes = 2,
        brokerConfig = {"num.io.threads=8"},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=50"})
class ProducerPipelineIT {

    private static final int RECORDS = 200_000;
    private static final int PARTITIONS = 6;

    @Test
    void idempotentProducerRecordsArriveOnceInOrder(Cluster cluster) throws Exception {
        String topic = "pipelined-producer";
        NewTopic nt = new NewTopic(
                        topic,
                        Map.of(
                                0,
                                List.of(1, 2),
                                1,
                                List.of(1, 2),
                                2,
                                List.of(1, 2),
                                3,
                                List.of(1, 2),
                                4,
                                List.of(1, 2),
                                5,
                                List.of(1, 2)))
                .configs(Map.of("min.insync.replicas", "2"));
        cluster.createTopics(List.of(nt), Duration.ofSeconds(60));
        KafkaNode leader = cluster.node(1);

        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 16_384);
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<Integer, byte[]> producer =
                new KafkaProducer<>(props, new IntegerSerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                int partition = i % PARTITIONS;
                producer.send(new ProducerRecord<>(topic, partition, i, value(i)), (md, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        assertNull(failure.get(), "no send failed");
        assertTrue(
                KpipeJmx.kpipe(leader, "inflight-requests-per-connection-max") > 1,
                "more than one request was in flight on a connection");
        assertTrue(KpipeJmx.kpipe(leader, "pipelined-request-total") > 0);
        assertEquals(0, KpipeJmx.produceErrors(leader, "OUT_OF_ORDER_SEQUENCE_NUMBER"));
        assertEquals(
                0.0, KpipeJmx.kpipe(leader, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");

        // Read everything back: per partition, keys must be i, i+P, i+2P, ... exactly once each.
        RecordReadBack.Order order =
                RecordReadBack.Order.contiguous(PARTITIONS, p -> p, PARTITIONS, p -> "partition " + p);
        RecordReadBack.Counts read = RecordReadBack.readToEnd(
                cluster, topic, new IntegerDeserializer(), new ByteArrayDeserializer(), Duration.ofSeconds(120), r -> {
                    order.next(r.partition(), r.key());
                    assertEquals(ByteBuffer.wrap(value(r.key())), ByteBuffer.wrap(r.value()));
                });
        assertEquals(RECORDS, read.total(), "every record present, none beyond those produced");
    }

    private static byte[] value(int i) {
        return ByteBuffer.allocate(100).putInt(0, i).putInt(96, ~i).array();
    }
}
