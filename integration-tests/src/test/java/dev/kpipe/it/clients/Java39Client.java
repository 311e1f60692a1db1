// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The producer and consumer of {@link JavaClientsIT}'s Kafka 3.9 tests, run in a child JVM whose class path holds
 * kafka-clients 3.9.1 (and its compression and logging jars) and the test classes: so it may use only API that
 * kafka-clients 3.9 has (a missing one fails the run with {@link NoSuchMethodError}).
 *
 * <p>Sends records {@code [0, count)} of {@link RecordFormat}, record {@code seq} to partition {@code seq % partitions},
 * {@code acks=all}, 5 in flight, with or without idempotence (retries left at their default), then reads the
 * partitions from the start with the 3.9 consumer and checks that each partition holds its records once and in
 * order. Prints one line for the test to parse:
 *
 * <pre>RESULT clientVersion=3.9.1 idempotent=true produced=10000 sendErrors=0 retries=0 consumed=10000 duplicates=0
 * outOfOrder=0 badValues=0</pre>
 *
 * and, if a send failed, a line {@code FIRST_ERROR <exception>}. Exit code 0 once the line is printed, 2 on bad
 * arguments.
 */
public final class Java39Client {
    private Java39Client() {}

    /** @param args bootstrap servers, topic, partitions, record count, idempotent (true/false) */
    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: Java39Client <bootstrap> <topic> <partitions> <count> <idempotent>");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        int count = Integer.parseInt(args[3]);
        boolean idempotent = Boolean.parseBoolean(args[4]);

        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384");
        AtomicInteger sendErrors = new AtomicInteger();
        AtomicReference<Exception> firstError = new AtomicReference<>();
        double retries;
        String clientVersion;
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int seq = 0; seq < count; seq++) {
                producer.send(
                        new ProducerRecord<>(topic, seq % partitions, RecordFormat.key(seq), RecordFormat.value(seq)),
                        (md, e) -> {
                            if (e != null) {
                                sendErrors.incrementAndGet();
                                firstError.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
            retries = ((Number) metric(producer.metrics(), "producer-metrics", "record-retry-total")).doubleValue();
            clientVersion = (String) metric(producer.metrics(), "app-info", "version");
        }

        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        int consumed = 0;
        int duplicates = 0;
        int outOfOrder = 0;
        int badValues = 0;
        boolean[] seen = new boolean[count];
        long[] next = new long[partitions];
        for (int i = 0; i < partitions; i++) {
            next[i] = i;
        }
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (consumed < count - sendErrors.get() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    long seq = RecordFormat.seqOf(r.key());
                    if (seq < 0 || seq >= count || seen[(int) seq]) {
                        duplicates++;
                        continue;
                    }
                    seen[(int) seq] = true;
                    if (seq != next[r.partition()]) {
                        outOfOrder++;
                    }
                    next[r.partition()] = seq + partitions;
                    if (!RecordFormat.value(seq).equals(r.value())) {
                        badValues++;
                    }
                    consumed++;
                }
            }
        }
        System.out.println("RESULT clientVersion=" + clientVersion + " idempotent=" + idempotent
                + " produced=" + count + " sendErrors=" + sendErrors.get() + " retries=" + (long) retries
                + " consumed=" + consumed + " duplicates=" + duplicates + " outOfOrder=" + outOfOrder
                + " badValues=" + badValues);
        if (firstError.get() != null) {
            System.out.println("FIRST_ERROR " + firstError.get());
        }
    }

    private static Object metric(Map<MetricName, ? extends Metric> metrics, String group, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            if (e.getKey().group().equals(group) && e.getKey().name().equals(name)) {
                return e.getValue().metricValue();
            }
        }
        throw new IllegalStateException("no metric " + group + ":" + name);
    }
}
