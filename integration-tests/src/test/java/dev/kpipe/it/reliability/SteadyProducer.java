// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;

/**
 * A Java idempotent producer (acks=all, 5 in flight: a pipelined connection on a kpipe broker) sending sequence
 * numbers 0, 1, 2, ... to partition 0 of a topic from its own thread, as fast as the broker acknowledges them, while
 * a test does something else to the broker. {@link #stopAndVerify} checks that every send was acknowledged and that
 * the partition holds exactly 0..n-1, once each, in order.
 */
final class SteadyProducer implements AutoCloseable {
    private final String name;
    private final String topic;
    private final Map<String, Object> clientConfig;
    private final KafkaProducer<Long, Long> producer;
    private final Thread thread;
    private final AtomicLong acked = new AtomicLong();
    private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;
    private long sent;

    /**
     * Starts sending.
     *
     * @param name for messages
     * @param clientConfig bootstrap (and security) settings
     * @param topic an existing topic; partition 0 receives the records
     */
    SteadyProducer(String name, Map<String, Object> clientConfig, String topic) {
        this.name = name;
        this.topic = topic;
        this.clientConfig = clientConfig;
        Map<String, Object> p = new HashMap<>(clientConfig);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "steady-" + name);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 2048);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        producer = new KafkaProducer<>(p, new LongSerializer(), new LongSerializer());
        thread = new Thread(this::run, "steady-producer-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        while (running) {
            long seq = sent++;
            producer.send(new ProducerRecord<>(topic, 0, seq, seq), (md, e) -> {
                if (e != null) {
                    errors.add("record " + seq + ": " + e);
                } else {
                    acked.incrementAndGet();
                }
            });
            if (seq % 64 == 63) {
                try {
                    TimeUnit.MILLISECONDS.sleep(1); // a steady trickle, not a flood: the point is that it keeps working
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** @return records acknowledged so far */
    long acked() {
        return acked.get();
    }

    /**
     * Stops sending, waits for every outstanding send, closes the producer, and checks: no send failed, and the
     * partition holds exactly the sequence numbers sent, once each, in order.
     *
     * @return how many records were sent (and stored)
     */
    long stopAndVerify() throws Exception {
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        producer.flush();
        producer.close(Duration.ofSeconds(30));
        assertEquals(List.of(), List.copyOf(errors), name + ": steady producer errors");
        assertEquals(sent, acked.get(), name + ": every record acknowledged");
        assertTrue(sent > 0, name + ": the steady producer sent records");
        List<Long> seen = new ArrayList<>();
        RecordReadBack.readToEnd(
                clientConfig,
                topic,
                new LongDeserializer(),
                new LongDeserializer(),
                Duration.ofSeconds(60),
                r -> seen.add(r.value()));
        for (int i = 0; i < seen.size(); i++) {
            if (seen.get(i) != i) {
                throw new AssertionError(name + ": offset " + i + " holds record " + seen.get(i) + " (expected " + i
                        + "; " + seen.size() + " stored, " + sent + " sent)");
            }
        }
        assertEquals(sent, seen.size(), name + ": records stored");
        return sent;
    }

    @Override
    public void close() {
        running = false;
        producer.close(Duration.ZERO);
    }
}
