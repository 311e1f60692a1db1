// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The requests being timed, from their read to their response written: a fixed-size open-addressing table keyed by the
 * broker's request object (by identity), whose slots are reused, so that timing a request allocates nothing. A slot's
 * state and time share one {@code long} (the time in the high bits, the {@link Step} in the low two), so each event
 * moves a request with one compare-and-set; the request's handler thread and its processor's network thread may race
 * (a response can be written before its request handler returns, Kafka's {@code sendResponse} inside {@code handle}).
 *
 * <p>Legal moves of a slot (any other event for a request finds it untracked):
 *
 * <pre>
 *   FREE --read--> READ(t0) --dispatched--> DISPATCHED(t1) --written--> FREE   read-to-dispatch, dispatch-to-write
 *                  READ(t0) --written-----> WRITTEN(t0)   --dispatched--> FREE  read-to-dispatch, 0 (written first)
 *   any step older than the abandon age --read of another request--> READ (counted abandoned)
 * </pre>
 *
 * <p>A request is timed only if one of {@value #PROBES} slots from its identity hash is free when it is read; else it
 * is counted untracked. Times are nanoseconds from the table's origin (never negative). Thread-safety: every method may
 * be called from any thread.
 */
final class InFlightTable {

    /** A slot's state, in the low two bits of its word ({@code FREE} is the word 0). */
    enum Step {
        FREE,
        READ,
        DISPATCHED,
        WRITTEN
    }

    /** The answer of {@link #dispatched} and {@link #written} for a request not timed. */
    static final long UNTRACKED = -1;
    /** The answer of {@link #written} when the request is not dispatched yet: {@link #dispatched} records both. */
    static final long PENDING = -2;

    /** Slots tried per request from its identity hash. */
    static final int PROBES = 16;

    private static final long CLAIMED = -1L;

    private final AtomicReferenceArray<Object> requests;
    private final AtomicLongArray words;
    private final int mask;
    private final long origin;
    private final long abandonNanos;

    /**
     * @param capacity slots, rounded up to a power of two (at least {@value #PROBES})
     * @param originNanos the clock's reading at start; times are kept relative to it
     * @param abandonNanos the age after which a request never completed may lose its slot to a new one
     */
    InFlightTable(int capacity, long originNanos, long abandonNanos) {
        int size = Integer.highestOneBit(Math.max(PROBES, capacity) - 1) << 1;
        this.requests = new AtomicReferenceArray<>(size);
        this.words = new AtomicLongArray(size);
        this.mask = size - 1;
        this.origin = originNanos;
        this.abandonNanos = abandonNanos;
    }

    /** @return the number of slots */
    int capacity() {
        return mask + 1;
    }

    /**
     * The request was read at {@code nowNanos}.
     *
     * @return 0 if it is timed, 1 if it took the slot of an abandoned request, -1 if no slot was free (untracked)
     */
    int read(Object request, long nowNanos) {
        long now = nowNanos - origin;
        int start = System.identityHashCode(request);
        for (int i = 0; i < PROBES; i++) {
            int slot = (start + i) & mask;
            long w = words.get(slot);
            boolean abandoned = w != 0 && w != CLAIMED && now - time(w) > abandonNanos;
            if ((w == 0 || abandoned) && words.compareAndSet(slot, w, CLAIMED)) {
                requests.set(slot, request);
                words.set(slot, word(now, Step.READ));
                return abandoned ? 1 : 0;
            }
        }
        return -1;
    }

    /**
     * The request's order-defining step happened at {@code nowNanos}.
     *
     * @return {@link #UNTRACKED}, or the read-to-dispatch time in nanoseconds shifted left by one, the low bit set if
     *     the response was already written (its dispatch-to-write time is then 0); see {@link #writtenFirst}
     */
    long dispatched(Object request, long nowNanos) {
        long now = nowNanos - origin;
        int slot = find(request);
        while (slot >= 0) {
            long w = words.get(slot);
            if (requests.get(slot) != request) {
                return UNTRACKED;
            }
            if (step(w) == Step.READ && words.compareAndSet(slot, w, word(now, Step.DISPATCHED))) {
                return since(w, now) << 1;
            }
            if (step(w) == Step.WRITTEN && words.compareAndSet(slot, w, CLAIMED)) {
                free(slot);
                return (since(w, now) << 1) | 1;
            }
            if (step(w) != Step.READ && step(w) != Step.WRITTEN) {
                return UNTRACKED;
            }
        }
        return UNTRACKED;
    }

    /** @return the read-to-dispatch nanoseconds of an answer of {@link #dispatched} other than {@link #UNTRACKED} */
    static long readToDispatch(long answer) {
        return answer >>> 1;
    }

    /** @return whether an answer of {@link #dispatched} says the response was written first */
    static boolean writtenFirst(long answer) {
        return (answer & 1) != 0;
    }

    /**
     * The request's response was written (or completed without being written) at {@code nowNanos}.
     *
     * @return the dispatch-to-write time in nanoseconds, {@link #PENDING} if the request is not dispatched yet, or
     *     {@link #UNTRACKED}
     */
    long written(Object request, long nowNanos) {
        long now = nowNanos - origin;
        int slot = find(request);
        while (slot >= 0) {
            long w = words.get(slot);
            if (requests.get(slot) != request) {
                return UNTRACKED;
            }
            if (step(w) == Step.DISPATCHED && words.compareAndSet(slot, w, CLAIMED)) {
                free(slot);
                return since(w, now);
            }
            if (step(w) == Step.READ && words.compareAndSet(slot, w, word(time(w), Step.WRITTEN))) {
                return PENDING;
            }
            if (step(w) != Step.DISPATCHED && step(w) != Step.READ) {
                return UNTRACKED;
            }
        }
        return UNTRACKED;
    }

    /** @return the number of requests being timed (a scan; for tests and the MBean, not the request path) */
    int inFlight() {
        int n = 0;
        for (int i = 0; i <= mask; i++) {
            if (words.get(i) != 0) {
                n++;
            }
        }
        return n;
    }

    private int find(Object request) {
        int start = System.identityHashCode(request);
        for (int i = 0; i < PROBES; i++) {
            int slot = (start + i) & mask;
            if (requests.get(slot) == request) {
                return slot;
            }
        }
        return -1;
    }

    private void free(int slot) {
        requests.set(slot, null);
        words.set(slot, 0);
    }

    private static long word(long time, Step step) {
        return (time << 2) | step.ordinal();
    }

    /**
     * @return the time from the slot's stamp to {@code now}, never negative: a thread that read the clock before
     *     another thread's event may apply its own event after it
     */
    private static long since(long word, long now) {
        return Math.max(0, now - time(word));
    }

    private static long time(long word) {
        return word >>> 2;
    }

    private static Step step(long word) {
        return word == CLAIMED ? Step.FREE : STEPS[(int) (word & 3)];
    }

    private static final Step[] STEPS = Step.values();
}
