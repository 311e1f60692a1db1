// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/** A {@link LoadRound} producer's sending loop (own thread) and its callbacks' counters (I/O thread; latency in us). */
final class LoadSender implements Runnable {
    final KafkaProducer<byte[], byte[]> producer;
    final LatencyHistogram histogram = new LatencyHistogram(); // written by the producer's I/O thread only
    final AtomicLong acked = new AtomicLong(); // all acks, warm-up included (progress)
    final AtomicLong errors = new AtomicLong();
    final AtomicReference<Exception> firstError = new AtomicReference<>();
    final String topic;
    final Integer partition;
    final byte[] value;
    final long windowStart;
    final long windowEnd;
    /** Paces this sender at its share of a fixed offered load (S2F), or null for flat out. */
    final RatePacer pacer;
    /** S5: records per transaction, 0 for a non-transactional producer. */
    final int commitEvery;
    /** S5: transactions whose commit returned within the window (sending thread). */
    final AtomicLong commitsInWindow = new AtomicLong();
    /**
     * S9: gaps between consecutive acknowledgements that end inside the window, microseconds (I/O thread); gaps under
     * {@link #GAP_FLOOR_NANOS} (callbacks of one response) are not recorded.
     */
    final LatencyHistogram ackGaps = new LatencyHistogram();
    /** Gaps shorter than this are callbacks of the same response, not a gap between two: 0.1 ms. */
    static final long GAP_FLOOR_NANOS = 100_000;
    /** The longest gap between consecutive acknowledgements ending inside the window, ns (I/O thread). */
    long ackGapMaxNanos;
    /** When the last acknowledgement arrived, warm-up included, or 0 (I/O thread). */
    private long lastAckNanos;
    /** S5: records sent in the open transaction (sending thread). */
    private int inTxn;

    boolean closed; // caller's thread only

    LoadSender(
            KafkaProducer<byte[], byte[]> producer,
            String topic,
            Integer partition,
            byte[] value,
            long windowStart,
            long windowEnd,
            RatePacer pacer,
            int commitEvery) {
        this.pacer = pacer;
        this.commitEvery = commitEvery;
        this.producer = producer;
        this.topic = topic;
        this.partition = partition;
        this.value = value;
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
    }

    @Override
    public void run() {
        try {
            if (commitEvery > 0) {
                producer.initTransactions();
            }
            while (System.nanoTime() < windowEnd && !Thread.currentThread().isInterrupted()) {
                if (pacer != null) {
                    long now = System.nanoTime();
                    long due = pacer.take(now);
                    if (due == 0) {
                        LockSupport.parkNanos(Math.max(10_000, Math.min(pacer.nextDueNanos() - now, 1_000_000)));
                        continue;
                    }
                    for (long i = 0; i < due; i++) {
                        send();
                    }
                } else {
                    send();
                }
            }
            if (inTxn > 0) {
                producer.commitTransaction();
            }
        } catch (RuntimeException e) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, e);
        }
    }

    /** Sends one record; a transactional sender begins a transaction before its first and commits after its last. */
    private void send() {
        if (commitEvery > 0 && inTxn++ == 0) {
            producer.beginTransaction();
        }
        long sent = System.nanoTime();
        producer.send(new ProducerRecord<>(topic, partition, null, value), (md, e) -> {
            long now = System.nanoTime();
            acked.incrementAndGet();
            if (e != null) {
                errors.incrementAndGet();
                firstError.compareAndSet(null, e);
            } else {
                if (now >= windowStart && now < windowEnd) {
                    histogram.record((now - sent) / 1000);
                    long gap = lastAckNanos == 0 ? 0 : now - lastAckNanos;
                    ackGapMaxNanos = Math.max(ackGapMaxNanos, gap);
                    if (gap >= GAP_FLOOR_NANOS) {
                        ackGaps.record(gap / 1000);
                    }
                }
                lastAckNanos = now;
            }
        });
        if (commitEvery > 0 && inTxn == commitEvery) {
            producer.commitTransaction();
            inTxn = 0;
            long now = System.nanoTime();
            if (now >= windowStart && now < windowEnd) {
                commitsInWindow.incrementAndGet();
            }
        }
    }
}
