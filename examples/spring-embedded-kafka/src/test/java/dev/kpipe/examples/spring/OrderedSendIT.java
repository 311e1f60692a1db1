// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.support.SendResult;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * A Spring for Apache Kafka test as an application's suite has them: {@code @EmbeddedKafka} starts a KRaft broker
 * inside this JVM, and a {@link KafkaTemplate} over an idempotent {@code acks=all} producer (5 requests in flight) sends
 * records that must be acknowledged and read back in the order they were sent. It names nothing outside Spring and
 * Kafka: the build runs it with kpipe on every broker (see README.md).
 *
 * <p>One broker: {@code @EmbeddedKafka(count = 2)} makes two combined broker-and-controller nodes, whose two-voter
 * KRaft quorum fails on its own here, with or without kpipe (README.md).
 */
@SpringJUnitConfig
@EmbeddedKafka
class OrderedSendIT {

    private static final String TOPIC = "orders";
    private static final int RECORDS = 300;

    @Configuration
    static class Config {

        @Bean
        KafkaTemplate<String, String> template(EmbeddedKafkaBroker broker) {
            Map<String, Object> config = Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    broker.getBrokersAsString(),
                    ProducerConfig.ACKS_CONFIG,
                    "all",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                    true,
                    ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
                    5,
                    ProducerConfig.LINGER_MS_CONFIG,
                    0,
                    ProducerConfig.BATCH_SIZE_CONFIG,
                    4096,
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                    StringSerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                    StringSerializer.class);
            return new KafkaTemplate<>(new DefaultKafkaProducerFactory<>(config));
        }
    }

    @Autowired
    private EmbeddedKafkaBroker broker;

    @Autowired
    private KafkaTemplate<String, String> template;

    @Test
    void idempotentAcksAllRecordsAreAcknowledgedAndReadInOrder() throws Exception {
        broker.addTopics(new NewTopic(TOPIC, 1, (short) 1));

        List<CompletableFuture<SendResult<String, String>>> sent = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            // about 1 KiB a record: a few records a batch, so that many produce requests are in flight
            sent.add(template.send(TOPIC, 0, null, "record-" + i + " ".repeat(1000)));
        }
        template.flush();
        List<Long> offsets = new ArrayList<>();
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            offsets.add(
                    sent.get(i).get(30, TimeUnit.SECONDS).getRecordMetadata().offset());
            expected.add((long) i);
        }
        assertEquals(expected, offsets, "every record acknowledged, at the offset of its place in the send order");

        List<String> values = new ArrayList<>();
        List<String> expectedValues = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            expectedValues.add("record-" + i);
        }
        Map<String, Object> consumerConfig = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.getBrokersAsString(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest");
        try (Consumer<String, String> consumer = new DefaultKafkaConsumerFactory<>(
                        consumerConfig, new StringDeserializer(), new StringDeserializer())
                .createConsumer()) {
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
        assertEquals(expectedValues, values, "the records read back in the order they were sent");
    }
}
