// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.RecordReadBack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The load of {@link ContainerFaultIT}: idempotent producers ({@code acks=all}, 5 requests in flight) writing
 * numbered records round-robin to every partition of one topic at a steady rate, and one transactional producer
 * committing small transactions to a second topic, each on a thread of its own, until {@link #stop()}; then {@link
 * #verify} reads both topics back.
 *
 * <p>Bookkeeping: every acknowledged record (its partition and offset), every committed transaction, the errors
 * producers reported by type, the errors that ended a producer (fatal), and acknowledgements per second since the
 * start (for the stall and rate of each phase). Callbacks run on the producers' I/O threads; the counters are
 * thread-safe; {@link #stop()} and {@link #verify} run on the test thread.
 */
final class FaultLoad {
    /** Records per transaction. */
    private static final int TX_RECORDS = 20;

    private static final int MAX_SECONDS = 1200;

    private final Map<String, Object> client;
    private final String topic;
    private final String txTopic;
    private final int partitions;
    private final int ratePerProducer;
    private final long startNanos = System.nanoTime();
    private final AtomicLongArray acksPerSecond = new AtomicLongArray(MAX_SECONDS);
    /** value -> partition * 2^40 + offset of each acknowledged idempotent record. */
    private final Map<String, Long> acked = new ConcurrentHashMap<>();

    private final Set<String> committed = ConcurrentHashMap.newKeySet();
    /**
     * Transactions whose commit failed with an error other than a timeout: committed or aborted, the client cannot
     * tell; read back all or nothing. By transaction number.
     */
    private final Map<Long, List<String>> uncertain = new ConcurrentHashMap<>();
    /** Transactional producers closed and replaced because they reached a fatal state (as an exactly-once app does). */
    private final AtomicInteger replacedProducers = new AtomicInteger();

    private final Map<String, Integer> errors = new ConcurrentHashMap<>();
    private final List<Throwable> fatal = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;

    /**
     * Starts the producers.
     *
     * @param client bootstrap servers (127.0.0.1) and any client settings
     * @param topic the idempotent producers' topic, {@code partitions} partitions
     * @param txTopic the transactional producer's topic, {@code partitions} partitions
     * @param idempotentProducers how many idempotent producers
     * @param ratePerProducer records per second each idempotent producer sends
     */
    FaultLoad(
            Map<String, Object> client,
            String topic,
            String txTopic,
            int partitions,
            int idempotentProducers,
            int ratePerProducer) {
        this.client = client;
        this.topic = topic;
        this.txTopic = txTopic;
        this.partitions = partitions;
        this.ratePerProducer = ratePerProducer;
        for (int p = 0; p < idempotentProducers; p++) {
            int id = p;
            threads.add(new Thread(() -> runIdempotent(id), "fault-load-idempotent-" + p));
        }
        threads.add(new Thread(this::runTransactional, "fault-load-transactional"));
        threads.forEach(Thread::start);
    }

    private Map<String, Object> producerConfig() {
        Map<String, Object> c = new HashMap<>(client);
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        c.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        // A request to a frozen or cut-off leader is given up after 10 s (default 30 s), then retried elsewhere; a
        // record is failed only after 3 minutes, longer than any fault here.
        c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000);
        return c;
    }

    private void runIdempotent(int id) {
        long seq = 0;
        long intervalNanos = TimeUnit.SECONDS.toNanos(1) / ratePerProducer;
        long next = System.nanoTime();
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(producerConfig(), new StringSerializer(), new StringSerializer())) {
            while (running) {
                String value = "i" + id + "-" + seq;
                int partition = (int) (seq % partitions);
                producer.send(new ProducerRecord<>(topic, partition, null, value), (md, e) -> {
                    if (e == null) {
                        acked.put(value, ((long) md.partition() << 40) | md.offset());
                        tick();
                    } else {
                        error(e);
                    }
                });
                seq++;
                next += intervalNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait); // pacing: a steady rate, not a flood
                }
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            fatal(e);
        }
    }

    private KafkaProducer<String, String> transactionalProducer() {
        Map<String, Object> c = producerConfig();
        c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "fault-load-tx-" + txTopic);
        c.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 120_000);
        KafkaProducer<String, String> producer = new KafkaProducer<>(c, new StringSerializer(), new StringSerializer());
        try {
            producer.initTransactions(); // fences an earlier producer of the id and completes or aborts its transaction
            return producer;
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw e;
        }
    }

    private void runTransactional() {
        long txn = 0;
        KafkaProducer<String, String> producer = null;
        try {
            producer = transactionalProducer();
            while (running) {
                List<String> values = new ArrayList<>(TX_RECORDS);
                boolean committing = false;
                try {
                    producer.beginTransaction();
                    for (int k = 0; k < TX_RECORDS; k++) {
                        String value = "t" + txn + "-" + k;
                        values.add(value);
                        producer.send(new ProducerRecord<>(txTopic, k % partitions, null, value), (md, e) -> {
                            if (e != null) {
                                error(e);
                            }
                        });
                    }
                    committing = true;
                    commit(producer);
                    committed.addAll(values);
                } catch (ProducerFencedException
                        | OutOfOrderSequenceException
                        | AuthorizationException
                        | UnsupportedVersionException
                        | IllegalStateException e) {
                    fatal(e);
                    return;
                } catch (KafkaException e) {
                    error(e);
                    if (committing) {
                        uncertain.put(txn, values);
                    }
                    try {
                        abort(producer);
                    } catch (KafkaException fatalState) {
                        // e.g. "Cannot execute transactional method because we are in an error state": a real
                        // exactly-once
                        // application closes the producer and starts a new one with the same transactional.id
                        error(fatalState);
                        producer.close(Duration.ZERO);
                        producer = null;
                        replacedProducers.incrementAndGet();
                        producer = transactionalProducer();
                    }
                }
                txn++;
                TimeUnit.MILLISECONDS.sleep(50); // about 10 transactions a second
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            fatal(e);
        } finally {
            if (producer != null) {
                producer.close(Duration.ofSeconds(30));
            }
        }
    }

    /** Commits, retrying a commit that timed out (the client allows only that after a timeout), for 5 minutes. */
    private void commit(KafkaProducer<String, String> producer) {
        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                error(e);
                if (System.nanoTime() > end) {
                    throw e;
                }
            }
        }
    }

    private void abort(KafkaProducer<String, String> producer) {
        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (true) {
            try {
                producer.abortTransaction();
                return;
            } catch (TimeoutException e) {
                error(e);
                if (System.nanoTime() > end) {
                    throw e;
                }
            }
        }
    }

    private void tick() {
        int s = (int) Math.min(MAX_SECONDS - 1, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos));
        acksPerSecond.incrementAndGet(s);
    }

    private void error(Exception e) {
        errors.merge(e.getClass().getSimpleName(), 1, Integer::sum);
    }

    private synchronized void fatal(Throwable e) {
        fatal.add(e);
    }

    /** @return seconds since the load started */
    int second() {
        return (int) TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos);
    }

    /** @return idempotent records acknowledged so far */
    long ackedCount() {
        return acked.size();
    }

    /** @return transactional producers replaced after reaching a fatal state */
    int replacedProducers() {
        return replacedProducers.get();
    }

    /** @return transactions whose outcome the client could not tell (read back all or nothing) */
    int uncertainTransactions() {
        return uncertain.size();
    }

    /** @return transactional records committed so far */
    long committedCount() {
        return committed.size();
    }

    /** @return the errors producers reported, by type (retried requests the client hid are not counted) */
    Map<String, Integer> errors() {
        return new TreeMap<>(errors);
    }

    /** @return the errors that ended a producer */
    synchronized List<Throwable> fatal() {
        return List.copyOf(fatal);
    }

    /**
     * @return acknowledgements per second over {@code [fromSecond, toSecond)} and the longest run of seconds in it
     *     without any, as {@code {rate, stallSeconds}}
     */
    long[] rateAndStall(int fromSecond, int toSecond) {
        long sum = 0;
        long stall = 0;
        long run = 0;
        for (int s = fromSecond; s < Math.min(toSecond, MAX_SECONDS); s++) {
            long n = acksPerSecond.get(s);
            sum += n;
            run = n == 0 ? run + 1 : 0;
            stall = Math.max(stall, run);
        }
        return new long[] {sum / Math.max(1, toSecond - fromSecond), stall};
    }

    /**
     * Stops the producers: each flushes what it sent and closes; waits up to {@code timeout} for all.
     *
     * @throws AssertionError if one does not stop in time
     */
    void stop(Duration timeout) throws InterruptedException {
        running = false;
        long end = System.nanoTime() + timeout.toNanos();
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
            assertTrue(!t.isAlive(), t.getName() + " stopped within " + timeout.toSeconds() + " s");
        }
    }

    /**
     * Reads both topics back: every acknowledged idempotent record exactly once, at the offset it was acknowledged
     * with, and each producer's records of a partition in the order sent; with {@code read_committed}, exactly the
     * records of committed transactions, each once, in order, and of each transaction whose commit failed without a
     * timeout (its outcome unknown to the client) all records or none.
     *
     * @return {@code {idempotent records read, transactional records read}}
     */
    long[] verify(Duration timeout) {
        Set<String> seen = new HashSet<>();
        Map<String, Long> lastSeq = new HashMap<>();
        RecordReadBack.Counts idem = RecordReadBack.readToEnd(
                client, topic, new StringDeserializer(), new StringDeserializer(), timeout, r -> {
                    assertTrue(
                            seen.add(r.value()),
                            () -> "read once: " + r.value() + " again at " + r.partition() + "@" + r.offset());
                    Long at = acked.get(r.value());
                    if (at != null) {
                        assertEquals(at >>> 40, r.partition(), () -> "partition of " + r.value());
                        assertEquals(
                                at & ((1L << 40) - 1), r.offset(), () -> "offset of " + r.value() + " as acknowledged");
                    }
                    String producer = r.value().substring(0, r.value().indexOf('-'));
                    long seq = Long.parseLong(r.value().substring(r.value().indexOf('-') + 1));
                    Long prev = lastSeq.put(r.partition() + "/" + producer, seq);
                    assertTrue(
                            prev == null || prev < seq,
                            () -> "order of " + producer + " in partition " + r.partition() + ": " + seq + " after "
                                    + prev);
                });
        Set<String> missing = new HashSet<>(acked.keySet());
        missing.removeAll(seen);
        assertEquals(
                Set.of(),
                missing.size() > 20 ? Set.of(missing.size() + " records") : missing,
                "acknowledged records not read back");

        Map<String, Object> rc = new HashMap<>(client);
        rc.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Set<String> txSeen = new HashSet<>();
        Map<Integer, Long> lastTx = new HashMap<>();
        RecordReadBack.Counts tx = RecordReadBack.readToEnd(
                rc, txTopic, new StringDeserializer(), new StringDeserializer(), timeout, r -> {
                    assertTrue(txSeen.add(r.value()), () -> "committed record read once: " + r.value());
                    int dash = r.value().indexOf('-');
                    long txn = Long.parseLong(r.value().substring(1, dash));
                    assertTrue(
                            committed.contains(r.value()) || uncertain.containsKey(txn),
                            () -> "only committed records are read: " + r.value());
                    long order = Long.parseLong(r.value().substring(1, dash)) * 1000
                            + Long.parseLong(r.value().substring(dash + 1));
                    Long prev = lastTx.put(r.partition(), order);
                    assertTrue(
                            prev == null || prev < order,
                            () -> "committed records in order in partition " + r.partition() + ": " + r.value());
                });
        long uncertainRead = 0;
        for (Map.Entry<Long, List<String>> u : uncertain.entrySet()) {
            long read = u.getValue().stream().filter(txSeen::contains).count();
            assertTrue(
                    read == 0 || read == u.getValue().size(),
                    "transaction " + u.getKey() + " (outcome unknown to the" + " client) read back all or nothing: "
                            + read + " of " + u.getValue().size());
            uncertainRead += read;
        }
        assertEquals(committed.size() + uncertainRead, txSeen.size(), "every committed transactional record read back");
        return new long[] {idem.total(), tx.total()};
    }
}
