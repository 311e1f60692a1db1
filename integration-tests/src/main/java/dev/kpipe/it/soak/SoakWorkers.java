// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The soak's clients. Each worker owns one Kafka client and one thread: it opens the client, loops, and on request
 * closes it gracefully and opens a new one with the same {@code client.id} (a client restart, as an application
 * restart would do). Errors are counted in {@link SoakStats}, never thrown out of the thread.
 */
final class SoakWorkers {
    /** The main topic: idempotent acks=all records, read by the {@link #GROUP} consumers and read back at the end. */
    static final String TOPIC = "soak";
    /** The acks=0 topic, read by a consumer of the {@code consumer} group protocol (KIP-848). */
    static final String ACKS0_TOPIC = "soak-acks0";

    static final String GROUP = "soak-group";
    static final String ACKS0_GROUP = "soak-acks0-group";
    static final int PARTITIONS = 6;
    static final int ACKS0_PARTITIONS = 2;
    static final int VALUE_BYTES = 100;
    /** Records the short-lived producer sends per incarnation (then it closes and starts over)... */
    static final int SHORT_LIVED_RECORDS = 100;
    /** ...at this rate: one new producer, with new connections to both brokers, about every second. */
    static final int SHORT_LIVED_RECORDS_PER_SECOND = 100;

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(60);

    private SoakWorkers() {}

    /** The value of an idempotent record: producer slot, incarnation, partition, per-partition sequence, filler. */
    static byte[] value(int slot, int incarnation, int partition, int seq) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES)
                .putInt(0, slot)
                .putInt(4, incarnation)
                .putInt(8, partition)
                .putInt(12, seq);
        for (int i = 16; i < VALUE_BYTES - 4; i++) {
            b.put(i, (byte) ('a' + (seq + i) % 26));
        }
        return b.putInt(VALUE_BYTES - 4, ~seq).array();
    }

    /**
     * An idempotent producer (acks=all, 5 requests in flight) sending paced records round robin to the partitions of
     * {@link #TOPIC}, each carrying its slot, incarnation and per-partition sequence number. A short-lived one closes
     * itself and starts over (new producer id, new connections) after every {@link #SHORT_LIVED_RECORDS} records.
     */
    static final class IdempotentProducer extends SoakWorker {
        private final int slot;
        private final AtomicInteger incarnations;
        private final int recordsPerSecond;
        private final boolean shortLived;
        private KafkaProducer<byte[], byte[]> producer;
        private SoakStats.Incarnation current;
        private long paceStart;
        private long n;

        /**
         * @param incarnations the slot's incarnation counter, shared across phases so incarnations stay unique
         */
        IdempotentProducer(
                int slot,
                AtomicInteger incarnations,
                int recordsPerSecond,
                boolean shortLived,
                SoakStats stats,
                Map<String, Object> baseConfig) {
            super((shortLived ? "short-lived-producer-" : "producer-") + slot, stats, baseConfig);
            this.slot = slot;
            this.incarnations = incarnations;
            this.recordsPerSecond = recordsPerSecond;
            this.shortLived = shortLived;
        }

        @Override
        boolean scheduledRestarts() {
            return !shortLived;
        }

        @Override
        void open() {
            Map<String, Object> p = new HashMap<>(baseConfig);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "soak-" + name);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
            p.put(ProducerConfig.LINGER_MS_CONFIG, 2);
            producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
            int inc = incarnations.getAndIncrement();
            current = new SoakStats.Incarnation(slot, inc, new int[PARTITIONS], new AtomicIntegerArray(PARTITIONS));
            stats.ledger.put(SoakStats.key(slot, inc), current);
            paceStart = System.nanoTime();
            n = 0;
        }

        @Override
        void step() throws InterruptedException {
            if (shortLived && n >= SHORT_LIVED_RECORDS) {
                requestRestart();
                return;
            }
            long due = paceStart + n * 1_000_000_000L / recordsPerSecond;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(Math.min(wait, 5_000_000));
                return;
            }
            int p = (int) (n++ % PARTITIONS);
            SoakStats.Incarnation inc = current;
            int seq = inc.sent()[p];
            try {
                producer.send(new ProducerRecord<>(TOPIC, p, null, value(slot, inc.incarnation(), p, seq)), (md, e) -> {
                    if (e == null) {
                        inc.acked().incrementAndGet(p);
                        stats.produced.incrementAndGet();
                    } else {
                        stats.error(
                                name,
                                "send failed (incarnation " + inc.incarnation() + ", partition " + p + ", seq " + seq
                                        + ")",
                                e);
                    }
                });
                inc.sent()[p] = seq + 1; // only after send() accepted it
            } catch (RuntimeException e) {
                stats.error(name, "send() threw", e);
                pause(200);
            }
        }

        @Override
        void close() {
            producer.close(CLOSE_TIMEOUT); // flushes: every callback has run when it returns
        }

        @Override
        void restarted() {
            (shortLived ? stats.shortLivedProducers : stats.producerRestarts).incrementAndGet();
        }
    }

    /** An acks=0 producer (no response per request: kpipe's no-response path) to {@link #ACKS0_TOPIC}. */
    static final class Acks0Producer extends SoakWorker {
        private final int recordsPerSecond;
        private final byte[] value = new byte[VALUE_BYTES];
        private KafkaProducer<byte[], byte[]> producer;
        private long paceStart;
        private long n;

        Acks0Producer(int recordsPerSecond, SoakStats stats, Map<String, Object> baseConfig) {
            super("acks0-producer", stats, baseConfig);
            this.recordsPerSecond = recordsPerSecond;
        }

        @Override
        void open() {
            Map<String, Object> p = new HashMap<>(baseConfig);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "soak-acks0-producer");
            p.put(ProducerConfig.ACKS_CONFIG, "0");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
            p.put(ProducerConfig.LINGER_MS_CONFIG, 2);
            producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
            paceStart = System.nanoTime();
            n = 0;
        }

        @Override
        void step() throws InterruptedException {
            long due = paceStart + n * 1_000_000_000L / recordsPerSecond;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(Math.min(wait, 5_000_000));
                return;
            }
            int p = (int) (n++ % ACKS0_PARTITIONS);
            try {
                producer.send(new ProducerRecord<>(ACKS0_TOPIC, p, null, value), (md, e) -> {
                    if (e == null) {
                        stats.acks0Sent.incrementAndGet();
                    } else {
                        stats.error(name, "send failed", e);
                    }
                });
            } catch (RuntimeException e) {
                stats.error(name, "send() threw", e);
                pause(200);
            }
        }

        @Override
        void close() {
            producer.close(CLOSE_TIMEOUT);
        }

        @Override
        void restarted() {
            stats.producerRestarts.incrementAndGet();
        }
    }

    /** A group member polling a topic with automatic offset commits. */
    static final class GroupConsumer extends SoakWorker {
        private final String topic;
        private final String group;
        private final String groupProtocol;
        private KafkaConsumer<byte[], byte[]> consumer;

        /**
         * @param groupProtocol {@code classic} or {@code consumer} (KIP-848)
         */
        GroupConsumer(
                String name,
                String topic,
                String group,
                String groupProtocol,
                SoakStats stats,
                Map<String, Object> baseConfig) {
            super(name, stats, baseConfig);
            this.topic = topic;
            this.group = group;
            this.groupProtocol = groupProtocol;
        }

        @Override
        void open() {
            Map<String, Object> p = new HashMap<>(baseConfig);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "soak-" + name);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, groupProtocol);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
            consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            consumer.subscribe(List.of(topic));
        }

        @Override
        void step() {
            try {
                stats.consumed.addAndGet(consumer.poll(Duration.ofMillis(200)).count());
            } catch (RuntimeException e) {
                stats.error(name, "poll failed", e);
                pause(200);
            }
        }

        @Override
        void close() {
            consumer.close(); // commits the consumed offsets and leaves the group
        }

        @Override
        void restarted() {
            stats.consumerRestarts.incrementAndGet();
        }
    }

    /**
     * @return every worker of one load phase, not started: the idempotent producers, a short-lived idempotent
     *     producer (slot {@code idempotentProducers}, {@link #SHORT_LIVED_RECORDS} records each), the acks=0 producer, two
     *     classic-protocol consumers of {@link #GROUP}, one consumer-protocol consumer of {@link #ACKS0_GROUP}, the
     *     admin worker
     */
    static List<SoakWorker> all(
            SoakOptions o, List<AtomicInteger> incarnations, SoakStats stats, Map<String, Object> baseConfig) {
        List<SoakWorker> w = new ArrayList<>();
        for (int i = 0; i < o.idempotentProducers(); i++) {
            w.add(new IdempotentProducer(i, incarnations.get(i), o.recordsPerSecond(), false, stats, baseConfig));
        }
        int shortSlot = o.idempotentProducers();
        w.add(new IdempotentProducer(
                shortSlot, incarnations.get(shortSlot), SHORT_LIVED_RECORDS_PER_SECOND, true, stats, baseConfig));
        w.add(new Acks0Producer(Math.max(1, o.recordsPerSecond() / 2), stats, baseConfig));
        w.add(new GroupConsumer("consumer-0", TOPIC, GROUP, "classic", stats, baseConfig));
        w.add(new GroupConsumer("consumer-1", TOPIC, GROUP, "classic", stats, baseConfig));
        w.add(new GroupConsumer("acks0-consumer", ACKS0_TOPIC, ACKS0_GROUP, "consumer", stats, baseConfig));
        w.add(new SoakAdminWorker(stats, baseConfig));
        return w;
    }
}
