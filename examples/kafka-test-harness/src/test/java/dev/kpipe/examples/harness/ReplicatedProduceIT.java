// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.Test;

/**
 * A test written for stock Apache Kafka, as in Kafka's own suite: a KRaft cluster of Kafka's {@link
 * KafkaClusterTestKit} (one controller, two brokers) inside this JVM, followers that fetch slowly ({@code
 * replica.fetch.min.bytes} never reached, so every fetch waits {@code replica.fetch.wait.max.ms}), a topic on both
 * brokers with {@code min.insync.replicas=2}, and an idempotent {@code acks=all} producer whose records must be
 * acknowledged and read back in the order they were sent. It names nothing outside Kafka: the build runs it with kpipe
 * on every broker (see README.md).
 */
class ReplicatedProduceIT {

    private static final String TOPIC = "replicated";
    private static final int RECORDS = 300;

    @Test
    void idempotentAcksAllRecordsAreAcknowledgedAndReadInOrder() throws Exception {
        TestKitNodes nodes = new TestKitNodes.Builder()
                .setNumControllerNodes(1)
                .setNumBrokerNodes(2)
                .build();
        try (KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes)
                .setConfigProp("replica.fetch.min.bytes", "1000000000")
                .setConfigProp("replica.fetch.wait.max.ms", "100")
                .build()) {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1)))
                                .configs(Map.of("min.insync.replicas", "2"))))
                        .all()
                        .get();
            }

            List<Long> offsets = produce(cluster.bootstrapServers());
            List<Long> expected = new ArrayList<>();
            for (long i = 0; i < RECORDS; i++) {
                expected.add(i);
            }
            assertEquals(expected, offsets, "every record acknowledged, at the offset of its place in the send order");

            List<String> values = consume(cluster.bootstrapServers());
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                sent.add("record-" + i);
            }
            assertEquals(sent, values, "the records read back in the order they were sent");
        }
    }

    /** Sends the records with an idempotent acks=all producer (5 requests in flight) and waits for every ack. */
    private static List<Long> produce(String bootstrap) throws Exception {
        Map<String, Object> config = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                true,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
                5,
                ProducerConfig.LINGER_MS_CONFIG,
                0,
                ProducerConfig.BATCH_SIZE_CONFIG,
                4096);
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                // about 1 KiB a record: a few records a batch, so that many produce requests are in flight
                sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "record-" + i + " ".repeat(1000))));
            }
            producer.flush();
        }
        List<Long> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : sent) {
            offsets.add(f.get().offset());
        }
        return offsets;
    }

    /** Reads the partition from the start until every record is in. */
    private static List<String> consume(String bootstrap) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition partition = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (values.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value().strip());
                }
            }
        }
        return values;
    }
}
