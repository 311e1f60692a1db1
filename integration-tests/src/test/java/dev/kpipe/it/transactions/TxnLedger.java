// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What a test's producers sent, and the check of what a {@code read_committed} consumer reads back: every record of a
 * committed transaction exactly once, none of an aborted one, a transaction of unknown outcome all or nothing, every
 * acknowledged record of an idempotent (non-transactional) producer once, and per producer and partition the records
 * in the order they were sent.
 *
 * <p>Each record's value is {@link #value}: producer, partition, the producer's sequence number in that partition
 * (counting every record it sent there, aborted ones too, so the committed ones read back strictly increase) and
 * the producer's transaction number ({@link #NO_TRANSACTION} for an idempotent producer). Thread-safe: writers'
 * threads and the producers' I/O threads record; the test thread checks after they are done.
 */
public final class TxnLedger {
    /** The transaction number of records an idempotent (non-transactional) producer wrote. */
    public static final int NO_TRANSACTION = -1;
    /** Bytes of each record's value. */
    public static final int VALUE_BYTES = 64;

    /** How one transaction ended, as its producer saw it. */
    public enum Outcome {
        /** Begun, not ended yet. */
        OPEN,
        /** {@code commitTransaction()} returned. */
        COMMITTED,
        /** {@code abortTransaction()} returned. */
        ABORTED,
        /** Neither returned (the producer had to be replaced): the broker decides; all of it or none must be there. */
        UNKNOWN
    }

    private final Map<Integer, Map<Integer, Outcome>> outcomes = new TreeMap<>();
    private final Map<Integer, Map<Integer, Integer>> sentPerTxn = new HashMap<>();
    private final Map<Integer, Map<Integer, BitSet>> acked = new HashMap<>();
    private final Map<Integer, Map<Integer, Integer>> sentPerPartition = new HashMap<>();

    /** @return the value of one record: producer, partition, sequence number, transaction number, then filler */
    public static byte[] value(int producer, int partition, int seq, int txn) {
        return ByteBuffer.allocate(VALUE_BYTES)
                .putInt(0, producer)
                .putInt(4, partition)
                .putInt(8, seq)
                .putInt(12, txn)
                .putInt(VALUE_BYTES - 4, ~seq)
                .array();
    }

    /** Records that {@code producer} began transaction {@code txn}. */
    public synchronized void begin(int producer, int txn) {
        outcomes.computeIfAbsent(producer, p -> new TreeMap<>()).put(txn, Outcome.OPEN);
    }

    /** Records that {@code send()} accepted a record of {@code producer} with sequence number {@code seq}. */
    public synchronized void sent(int producer, int partition, int seq, int txn) {
        if (txn != NO_TRANSACTION) {
            sentPerTxn.computeIfAbsent(producer, p -> new HashMap<>()).merge(txn, 1, Integer::sum);
        }
        sentPerPartition.computeIfAbsent(producer, p -> new HashMap<>()).merge(partition, seq + 1, Math::max);
    }

    /** Records that an idempotent producer's record was acknowledged (its callback, no exception). */
    public synchronized void acked(int producer, int partition, int seq) {
        acked.computeIfAbsent(producer, p -> new HashMap<>())
                .computeIfAbsent(partition, p -> new BitSet())
                .set(seq);
    }

    /** Records how {@code producer}'s transaction {@code txn} ended. */
    public synchronized void end(int producer, int txn, Outcome outcome) {
        outcomes.computeIfAbsent(producer, p -> new TreeMap<>()).put(txn, outcome);
    }

    /** @return the number of transactions of {@code producer} (all producers if negative) that ended so */
    public synchronized int count(int producer, Outcome outcome) {
        int n = 0;
        for (Map.Entry<Integer, Map<Integer, Outcome>> e : outcomes.entrySet()) {
            if (producer < 0 || e.getKey() == producer) {
                n += (int)
                        e.getValue().values().stream().filter(o -> o == outcome).count();
            }
        }
        return n;
    }

    /** @return records sent in committed transactions, all producers */
    public synchronized long committedRecords() {
        long n = 0;
        for (Map.Entry<Integer, Map<Integer, Outcome>> e : outcomes.entrySet()) {
            for (Map.Entry<Integer, Outcome> t : e.getValue().entrySet()) {
                if (t.getValue() == Outcome.COMMITTED) {
                    n += sentPerTxn.getOrDefault(e.getKey(), Map.of()).getOrDefault(t.getKey(), 0);
                }
            }
        }
        return n;
    }

    /** A reader of one topic against this ledger: {@link #accept} each record read, then {@link #finish}. */
    public Check check() {
        return new Check();
    }

    /** Checks records read back (not thread-safe: the read-back's thread). */
    public final class Check implements java.util.function.Consumer<ConsumerRecord<?, byte[]>> {
        private final Map<Long, Integer> lastSeq = new HashMap<>();
        private final Map<Long, Integer> readPerTxn = new HashMap<>();
        private final Map<Integer, Map<Integer, BitSet>> seenUntransacted = new HashMap<>();
        private long read;

        @Override
        public void accept(ConsumerRecord<?, byte[]> r) {
            ByteBuffer b = ByteBuffer.wrap(r.value());
            int producer = b.getInt(0);
            int partition = b.getInt(4);
            int seq = b.getInt(8);
            int txn = b.getInt(12);
            assertEquals(r.partition(), partition, "record of partition " + partition + " found in " + r.partition());
            long stream = ((long) producer << 32) | partition;
            Integer last = lastSeq.get(stream);
            assertTrue(
                    last == null || seq > last,
                    () -> "producer " + producer + ", partition " + partition + ": seq "
                            + seq + " (transaction " + txn + ") at offset " + r.offset() + " after seq " + last
                            + ": duplicated or out of order");
            lastSeq.put(stream, seq);
            read++;
            synchronized (TxnLedger.this) {
                int sent = sentPerPartition.getOrDefault(producer, Map.of()).getOrDefault(partition, 0);
                assertTrue(
                        seq < sent,
                        () -> "producer " + producer + ", partition " + partition + ": seq " + seq + " was never sent");
                if (txn == NO_TRANSACTION) {
                    seenUntransacted
                            .computeIfAbsent(producer, p -> new HashMap<>())
                            .computeIfAbsent(partition, p -> new BitSet())
                            .set(seq);
                    return;
                }
                Outcome o = outcomes.getOrDefault(producer, Map.of()).get(txn);
                assertTrue(
                        o == Outcome.COMMITTED || o == Outcome.UNKNOWN,
                        () -> "producer " + producer + ", partition "
                                + partition + ": seq " + seq + " of transaction " + txn
                                + " read back by read_committed, but that"
                                + " transaction was " + o);
            }
            readPerTxn.merge(((long) producer << 32) | (txn & 0xffffffffL), 1, Integer::sum);
        }

        /** @return records read so far */
        public long read() {
            return read;
        }

        /**
         * Checks the counts once everything was read: per committed transaction the records sent, per unknown one all
         * or none, every acknowledged idempotent record present.
         *
         * @return a one-line summary
         */
        public String finish() {
            synchronized (TxnLedger.this) {
                List<String> problems = new ArrayList<>();
                long committedRead = 0;
                int unknownPresent = 0;
                for (Map.Entry<Integer, Map<Integer, Outcome>> e : outcomes.entrySet()) {
                    int producer = e.getKey();
                    for (Map.Entry<Integer, Outcome> t : e.getValue().entrySet()) {
                        int sent = sentPerTxn.getOrDefault(producer, Map.of()).getOrDefault(t.getKey(), 0);
                        int got = readPerTxn.getOrDefault(((long) producer << 32) | (t.getKey() & 0xffffffffL), 0);
                        switch (t.getValue()) {
                            case COMMITTED -> {
                                committedRead += got;
                                if (got != sent) {
                                    problems.add("producer " + producer + " transaction " + t.getKey() + " committed "
                                            + sent + " records, read " + got);
                                }
                            }
                            case UNKNOWN -> {
                                if (got != 0 && got != sent) {
                                    problems.add("producer " + producer + " transaction " + t.getKey()
                                            + " (outcome unknown) sent " + sent + " records, read " + got
                                            + ": not atomic");
                                }
                                unknownPresent += got == 0 ? 0 : 1;
                            }
                            case OPEN ->
                                problems.add("producer " + producer + " transaction " + t.getKey() + " never ended");
                            default -> {} // ABORTED: any record read already failed accept()
                        }
                    }
                }
                long idempotentAcked = 0;
                for (Map.Entry<Integer, Map<Integer, BitSet>> e : acked.entrySet()) {
                    for (Map.Entry<Integer, BitSet> p : e.getValue().entrySet()) {
                        BitSet missing = (BitSet) p.getValue().clone();
                        missing.andNot(seenUntransacted
                                .getOrDefault(e.getKey(), Map.of())
                                .getOrDefault(p.getKey(), new BitSet()));
                        idempotentAcked += p.getValue().cardinality();
                        if (!missing.isEmpty()) {
                            problems.add("idempotent producer " + e.getKey() + ", partition " + p.getKey() + ": "
                                    + missing.cardinality() + " acknowledged record(s) missing, first seq "
                                    + missing.nextSetBit(0));
                        }
                    }
                }
                if (!problems.isEmpty()) {
                    fail(problems.size() + " problem(s) in what read_committed read back: "
                            + String.join("; ", problems.subList(0, Math.min(10, problems.size()))));
                }
                return String.format(
                        "read %d: %d of %d committed transactions' records, %d acknowledged idempotent"
                                + " records; transactions committed %d, aborted %d, unknown %d (%d of them present)",
                        read,
                        committedRead,
                        committedRecords(),
                        idempotentAcked,
                        count(-1, Outcome.COMMITTED),
                        count(-1, Outcome.ABORTED),
                        count(-1, Outcome.UNKNOWN),
                        unknownPresent);
            }
        }
    }
}
