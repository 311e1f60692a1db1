// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import dev.kpipe.it.transactions.TxnLedger.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One transactional Java producer running transactions in a loop, as an exactly-once application does: begin, send
 * {@code recordsPerTxn} records spread over {@code partitionsPerTxn} partitions drawn from a seeded {@link Random},
 * then commit, or abort where the same {@code Random} says so. On an error it aborts and goes on with the next
 * transaction (what {@code KafkaProducer}'s Javadoc prescribes for abortable errors); a timed-out commit is retried
 * (the client allows it); if the abort fails too (fenced, or the producer is in a fatal state) the producer is closed
 * and a new one with the same {@code transactional.id} is initialised, and that transaction's outcome is unknown
 * (the broker completes or aborts it: all or nothing). Every transaction and record goes into a {@link TxnLedger}.
 *
 * <p>Runs on its own thread ({@link #run}); the producer's callbacks run on its I/O thread; counters are read by the
 * test thread.
 */
public final class TxnWriter implements Runnable {
    /** How long a commit is retried after {@code TimeoutException}s, and initTransactions after a new producer. */
    private static final Duration RETRY_FOR = Duration.ofSeconds(60);

    private final Map<String, Object> config;
    private final int producerIndex;
    private final String topic;
    private final int partitions;
    private final int partitionsPerTxn;
    private final int recordsPerTxn;
    private final double abortShare;
    private final int maxTxns;
    private final Random random;
    private final TxnLedger ledger;
    private final int[] nextSeq;
    /** Set to end the loop after the current transaction. */
    public final AtomicBoolean stop = new AtomicBoolean();
    /** Transactions committed (commitTransaction returned). */
    public final AtomicInteger commits = new AtomicInteger();
    /** Producers replaced after a failed abort. */
    public final AtomicInteger replacedProducers = new AtomicInteger();
    /** Errors seen, by exception class. */
    public final Map<String, Integer> errors = new ConcurrentHashMap<>();
    /** What ended the loop early (an error the writer does not recover from), if anything. */
    public final AtomicReference<Throwable> failure = new AtomicReference<>();

    private volatile KafkaProducer<byte[], byte[]> current;

    /**
     * @param baseConfig bootstrap servers and the test's producer settings; {@code transactional.id} must be set
     * @param producerIndex this writer's number in the ledger and record values
     * @param maxTxns transactions to run, or 0 to run until {@link #stop}
     * @param seed the seed of the partition choice and the commit/abort draw
     */
    public TxnWriter(
            Map<String, Object> baseConfig,
            int producerIndex,
            String topic,
            int partitions,
            int partitionsPerTxn,
            int recordsPerTxn,
            double abortShare,
            int maxTxns,
            long seed,
            TxnLedger ledger) {
        this.config = new HashMap<>(baseConfig);
        this.config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        this.config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        if (!config.containsKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
            throw new IllegalArgumentException("transactional.id not set");
        }
        this.producerIndex = producerIndex;
        this.topic = topic;
        this.partitions = partitions;
        this.partitionsPerTxn = partitionsPerTxn;
        this.recordsPerTxn = recordsPerTxn;
        this.abortShare = abortShare;
        this.maxTxns = maxTxns;
        this.random = new Random(seed);
        this.ledger = ledger;
        this.nextSeq = new int[partitions];
    }

    /** @return the writer's {@code transactional.id} */
    public String transactionalId() {
        return (String) config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
    }

    /** @return the producer in use now (for its metrics), or null before the first and after the last */
    public KafkaProducer<byte[], byte[]> producer() {
        return current;
    }

    @Override
    public void run() {
        try {
            current = newProducer();
            List<Integer> all = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                all.add(p);
            }
            for (int txn = 0; !stop.get() && (maxTxns == 0 || txn < maxTxns); txn++) {
                Collections.shuffle(all, random);
                List<Integer> chosen = List.copyOf(all.subList(0, partitionsPerTxn));
                boolean abort = random.nextDouble() < abortShare;
                runOne(txn, chosen, abort);
            }
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        } finally {
            KafkaProducer<byte[], byte[]> p = current;
            current = null;
            if (p != null) {
                p.close(Duration.ofSeconds(30));
            }
        }
    }

    private void runOne(int txn, List<Integer> chosen, boolean abort) throws InterruptedException {
        KafkaProducer<byte[], byte[]> p = current;
        ledger.begin(producerIndex, txn);
        try {
            p.beginTransaction();
            for (int i = 0; i < recordsPerTxn; i++) {
                int partition = chosen.get(i % chosen.size());
                int seq = nextSeq[partition]++;
                p.send(
                        new ProducerRecord<>(
                                topic, partition, null, TxnLedger.value(producerIndex, partition, seq, txn)),
                        (md, e) -> {
                            if (e != null) {
                                errors.merge("send: " + e.getClass().getSimpleName(), 1, Integer::sum);
                            }
                        });
                ledger.sent(producerIndex, partition, seq, txn);
            }
            if (abort) {
                p.abortTransaction();
                ledger.end(producerIndex, txn, Outcome.ABORTED);
            } else {
                commit(p);
                ledger.end(producerIndex, txn, Outcome.COMMITTED);
                commits.incrementAndGet();
            }
        } catch (KafkaException e) {
            errors.merge(e.getClass().getSimpleName(), 1, Integer::sum);
            try {
                p.abortTransaction();
                ledger.end(producerIndex, txn, Outcome.ABORTED);
            } catch (KafkaException abortFailed) {
                errors.merge("abort: " + abortFailed.getClass().getSimpleName(), 1, Integer::sum);
                ledger.end(producerIndex, txn, Outcome.UNKNOWN);
                p.close(Duration.ZERO);
                current = null;
                replacedProducers.incrementAndGet();
                current = newProducer();
            }
        }
    }

    private void commit(KafkaProducer<byte[], byte[]> p) throws InterruptedException {
        long deadline = System.nanoTime() + RETRY_FOR.toNanos();
        while (true) {
            try {
                p.commitTransaction();
                return;
            } catch (TimeoutException e) {
                errors.merge("commit: TimeoutException", 1, Integer::sum);
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    /** A new producer with the writer's {@code transactional.id}, initialised (initTransactions retried on timeout). */
    private KafkaProducer<byte[], byte[]> newProducer() throws InterruptedException {
        KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(config);
        long deadline = System.nanoTime() + RETRY_FOR.toNanos();
        while (true) {
            try {
                p.initTransactions();
                return p;
            } catch (TimeoutException e) {
                errors.merge("init: TimeoutException", 1, Integer::sum);
                if (System.nanoTime() > deadline) {
                    p.close(Duration.ZERO);
                    throw e;
                }
            } catch (RuntimeException e) {
                p.close(Duration.ZERO);
                throw e;
            }
        }
    }
}
