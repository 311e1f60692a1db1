// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.quotas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.IntegerSerializer;

/**
 * Load and measurement helpers of the quota ITs: quota set-up through the Admin API, a
 * paced idempotent producer, and a consumer that checks every record arrived once and in order and
 * measures the append rate from the records' {@code LogAppendTime} timestamps.
 */
final class QuotaLoad {

    static final double MIB = 1024 * 1024;

    private QuotaLoad() {}

    /**
     * What the consumer found in partition 0 of a topic.
     *
     * @param records records read (keys 0..records-1, checked in order)
     * @param firstAppendMs the broker's append time of the first record
     * @param bucketBytes key+value bytes appended per {@value #BUCKET_MS} ms bucket after {@code firstAppendMs}
     */
    record Timeline(long records, long firstAppendMs, long[] bucketBytes) {
        static final int BUCKET_MS = 100;
        static final int PER_S = 1000 / BUCKET_MS;

        /** @return key+value bytes appended in the first {@code tS} seconds after the first append */
        double cumulative(double tS) {
            long n = Math.round(tS * PER_S);
            long sum = 0;
            for (int i = 0; i < n && i < bucketBytes.length; i++) {
                sum += bucketBytes[i];
            }
            return sum;
        }

        /** @return seconds from the first to the last append */
        double spanS() {
            return bucketBytes.length / (double) PER_S;
        }

        /** @return key+value bytes per second appended in [fromS, toS) after the first append */
        double rate(double fromS, double toS) {
            return (cumulative(toS) - cumulative(fromS)) / (toS - fromS);
        }

        /**
         * The append rate with Kafka's quota-window sawtooth averaged out: the mean, over every start
         * time {@code s} in [fromS, fromS + periodS) (in bucket steps), of the rate over [s, s + lengthS).
         * Kafka measures a client's rate over a window of {@code quota.window.num} samples of {@code
         * quota.window.size.seconds}; a client able to go faster than its quota is let through in a
         * burst each time the oldest sample expires, about once per window ({@code periodS}), so a rate
         * over one fixed interval depends on where the bursts fall. Averaging the interval's start over
         * one window period cancels that phase. Needs data up to {@code fromS + periodS + lengthS}.
         */
        double windowAveragedRate(double fromS, double periodS, double lengthS) {
            int steps = (int) Math.round(periodS * PER_S);
            double sum = 0;
            for (int i = 0; i < steps; i++) {
                double s = fromS + i / (double) PER_S;
                sum += rate(s, s + lengthS);
            }
            return sum / steps;
        }

        /** @return the per-second series in KiB, for the test output */
        String series() {
            StringBuilder sb = new StringBuilder();
            for (int s = 0; s * PER_S < bucketBytes.length; s++) {
                long b = 0;
                for (int i = s * PER_S; i < (s + 1) * PER_S && i < bucketBytes.length; i++) {
                    b += bucketBytes[i];
                }
                sb.append(s == 0 ? "" : " ").append(Math.round(b / 1024.0));
            }
            return sb.toString();
        }
    }

    /**
     * @param sent records the producer had acknowledged
     * @param throttleAvgMs the producer's {@code produce-throttle-time-avg}
     * @param throttleMaxMs the producer's {@code produce-throttle-time-max}
     */
    record Produced(long sent, double throttleAvgMs, double throttleMaxMs) {}

    /** Creates a one-partition topic stamped with the broker's append time (what the rate is measured from). */
    static void createTopic(Cluster cluster, String topic) {
        cluster.createTopics(
                List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("message.timestamp.type", "LogAppendTime"))),
                Duration.ofSeconds(60));
    }

    /**
     * Sets (value non-null) or removes (value null) one quota of an entity and waits until the broker
     * reports it. A null entity value is the default entity.
     */
    static void quota(Cluster cluster, Map<String, String> entity, String key, Double value) throws Exception {
        ClientQuotaEntity e = new ClientQuotaEntity(entity);
        cluster.admin()
                .alterClientQuotas(
                        List.of(new ClientQuotaAlteration(e, List.of(new ClientQuotaAlteration.Op(key, value)))))
                .all()
                .get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Map<ClientQuotaEntity, Map<String, Double>> all = cluster.admin()
                    .describeClientQuotas(ClientQuotaFilter.all())
                    .entities()
                    .get(30, TimeUnit.SECONDS);
            Double current = all.getOrDefault(e, Map.of()).get(key);
            if (value == null ? current == null : value.equals(current)) {
                break;
            }
            assertTrue(System.nanoTime() < deadline, "quota " + e + " " + key + "=" + value + " not visible");
            TimeUnit.MILLISECONDS.sleep(100);
        }
        TimeUnit.MILLISECONDS.sleep(300); // the quota managers apply the same metadata image
    }

    /** @return the producer settings of the rate tests: idempotent, acks=all, 5 in flight, small buffer */
    static Map<String, Object> producerProps(Map<String, Object> base, String clientId, int batchSize) {
        Map<String, Object> p = new HashMap<>(base);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, batchSize);
        // Small, so that the backlog left when sending stops drains in a few seconds at the quota.
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 2 * 1024 * 1024);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 120_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000);
        return p;
    }

    /**
     * Sends records with keys 0, 1, 2, ... (partition 0), paced to {@code attemptBytesPerSec} of value
     * bytes (send blocks when the producer's buffer is full, i.e. when the broker holds it back), for
     * {@code duration}; then flushes.
     */
    static Produced produce(
            Map<String, Object> props, String topic, Duration duration, double attemptBytesPerSec, int valueSize)
            throws Exception {
        AtomicReference<Exception> failure = new AtomicReference<>();
        AtomicLong acked = new AtomicLong();
        try (KafkaProducer<Integer, byte[]> producer =
                new KafkaProducer<>(props, new IntegerSerializer(), new ByteArraySerializer())) {
            long start = System.nanoTime();
            long end = start + duration.toNanos();
            int i = 0;
            while (failure.get() == null) {
                long now = System.nanoTime();
                if (now >= end) {
                    break;
                }
                long due = start + (long) (i * (double) valueSize / attemptBytesPerSec * 1e9);
                if (due > now) {
                    TimeUnit.NANOSECONDS.sleep(Math.min(due - now, end - now));
                    continue;
                }
                producer.send(new ProducerRecord<>(topic, 0, i, value(i, valueSize)), (md, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    } else {
                        acked.incrementAndGet();
                    }
                });
                i++;
            }
            producer.flush();
            assertNull(failure.get(), "no send failed");
            assertEquals(i, acked.get(), "every record acknowledged");
            return new Produced(
                    i,
                    metric(producer.metrics(), "produce-throttle-time-avg"),
                    metric(producer.metrics(), "produce-throttle-time-max"));
        }
    }

    static double metric(Map<MetricName, ? extends Metric> metrics, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) {
                Object v = e.getValue().metricValue();
                return v instanceof Number n && !Double.isNaN(n.doubleValue()) ? n.doubleValue() : 0;
            }
        }
        throw new AssertionError("no producer metric " + name);
    }

    static byte[] value(int i, int size) {
        return ByteBuffer.allocate(size).putInt(0, i).putInt(size - 4, ~i).array();
    }

    /**
     * Reads partition 0 from the beginning: exactly {@code expected} records, keys 0..expected-1 in
     * order (each once), every timestamp the broker's append time.
     *
     * @param valueSize the value size to check, or -1 for any
     */
    static Timeline consume(Cluster cluster, String topic, long expected, int valueSize) {
        Map<String, Object> props = new HashMap<>(cluster.clientConfig());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "quota-it-reader");
        List<Long> buckets = new ArrayList<>();
        long[] first = {-1};
        RecordReadBack.Order order = RecordReadBack.Order.contiguous(1, p -> 0, 1, p -> topic);
        RecordReadBack.Counts read = RecordReadBack.readToEnd(
                props, topic, new IntegerDeserializer(), new ByteArrayDeserializer(), Duration.ofSeconds(90), r -> {
                    order.next(r.partition(), r.key());
                    if (valueSize >= 0) {
                        assertEquals(valueSize, r.value().length);
                        assertEquals(r.key(), ByteBuffer.wrap(r.value()).getInt(0), "value of record " + r.key());
                    }
                    assertEquals(TimestampType.LOG_APPEND_TIME, r.timestampType());
                    if (first[0] < 0) {
                        first[0] = r.timestamp();
                    }
                    int b = (int) ((r.timestamp() - first[0]) / Timeline.BUCKET_MS);
                    while (buckets.size() <= b) {
                        buckets.add(0L);
                    }
                    buckets.set(b, buckets.get(b) + 4 + r.value().length);
                });
        assertEquals(expected, read.total(), topic + ": every record present, none beyond those produced");
        return new Timeline(
                read.total(),
                first[0],
                buckets.stream().mapToLong(Long::longValue).toArray());
    }

    /** @return every broker log line since start that mentions IllegalStateException */
    static List<String> illegalStates(KafkaNode node) {
        return node.logSinceStart()
                .lines()
                .filter(l -> l.contains("IllegalStateException"))
                .toList();
    }
}
