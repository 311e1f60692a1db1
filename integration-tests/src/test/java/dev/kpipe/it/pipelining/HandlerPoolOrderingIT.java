// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code num.io.threads=8} and one idempotent producer flooding one partition with small batches:
 * with several requests of the connection read at once, any reordering between handler threads
 * would show up as OUT_OF_ORDER_SEQUENCE_NUMBER. kpipe dispatches one request per connection at a
 * time, so there must be none.
 */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(
        nodes = 1,
        brokerConfig = {"num.io.threads=8"})
class HandlerPoolOrderingIT {

    private static final int RECORDS = 100_000;

    @Test
    void floodingOnePartitionGivesNoOutOfOrderSequence(Cluster cluster) throws Exception {
        String topic = "flood";
        cluster.createTopic(topic, 1, 1);
        KafkaNode node = cluster.node(1);
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 1024);
        AtomicReference<Exception> failure = new AtomicReference<>();
        double retries;
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[64]), (md, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
            retries = ((Number) producer.metrics()
                            .get(new MetricName(
                                    "record-retry-total",
                                    "producer-metrics",
                                    "",
                                    Map.of(
                                            "client-id",
                                            producer.metrics().keySet().stream()
                                                    .filter(m -> m.group().equals("producer-metrics"))
                                                    .findFirst()
                                                    .orElseThrow()
                                                    .tags()
                                                    .get("client-id"))))
                            .metricValue())
                    .doubleValue();
        }
        assertNull(failure.get(), "no send failed");
        assertEquals(0, KpipeJmx.produceErrors(node, "OUT_OF_ORDER_SEQUENCE_NUMBER"), "broker answered out-of-order");
        assertEquals(0.0, retries, "the producer never had to retry");
        long end = cluster.admin()
                .listOffsets(Map.of(new TopicPartition(topic, 0), org.apache.kafka.clients.admin.OffsetSpec.latest()))
                .all()
                .get()
                .get(new TopicPartition(topic, 0))
                .offset();
        assertEquals(RECORDS, end, "every record appended exactly once");
        assertTrue(KpipeJmx.kpipe(node, "pipelined-request-total") > 0, "the producer connection was pipelined");
        assertEquals(0.0, KpipeJmx.kpipe(node, "plugin-fault-total"), "no throwable caught in kpipe's hooks or plugin");
    }
}
