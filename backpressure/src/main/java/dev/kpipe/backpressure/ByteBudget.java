package dev.kpipe.backpressure;

import java.util.ArrayDeque;
import java.util.Objects;

/**
 * A broker-wide budget of request bytes admitted on pipelined connections and not yet answered
 * ({@code kpipe.max.inflight.bytes}).
 *
 * <p>A connection must {@linkplain #tryReserve reserve} an estimate of its next request's size before
 * it is unmuted (Kafka reads the size only with the request); when the request is read its actual
 * size {@linkplain #settle settles} the reservation, and the bytes are {@linkplain #release released}
 * when its response has been written or the connection closed. So the bytes admitted can exceed the
 * capacity only by what requests exceed their reservation. A reservation larger than the capacity
 * is clamped to the capacity: such a connection is admitted alone once nothing else holds permits,
 * and never waits forever.
 *
 * <p><b>Hysteresis</b>: when the admitted bytes reach the capacity the budget is <i>saturated</i> and
 * admits nothing until they fall to the low watermark, so connections do not flap.
 * <b>Fairness</b>: connections that could not reserve wait in FIFO order; while any waits, a new
 * reservation is refused unless it is the head's, and a release admits waiters from the head, in the
 * order they started waiting, calling their {@link Waiter#admitted()}.
 *
 * <p>Thread-safe: network threads of every processor share one budget. {@link Waiter#admitted()} is
 * called on the releasing thread, with no lock held; it must only hand the news to the waiter's own
 * network thread.
 */
public final class ByteBudget {

    /** A connection waiting for budget. */
    public interface Waiter {
        /** Its reservation was granted; called once per granted wait, on any thread, no lock held. */
        void admitted();
    }

    /** Written under the lock ({@link #capacity(long, long)}); read without it by {@link #clamp}. */
    private volatile long capacity;
    private long lowWatermark;
    private long used;
    private long peak;
    private boolean saturated;
    private long waitsStarted;
    private long waitNanosTotal;
    private long oversizeAdmitted;
    private final ArrayDeque<Entry> waiters = new ArrayDeque<>();
    /**
     * {@code waiters.size()}, written under the lock after each change of {@link #waiters}, read without it by
     * {@link #waiting()}: a network thread asks every round whether anyone waits, and must not take the monitor for
     * that while nobody does.
     */
    private volatile int waiting;
    /** The clock of the wait times ({@link #waitNanosTotal()}). */
    private final Ticker ticker;

    private static final class Entry {
        final Waiter waiter;
        final long bytes;
        final long sinceNanos;

        Entry(Waiter waiter, long bytes, long sinceNanos) {
            this.waiter = waiter;
            this.bytes = bytes;
            this.sinceNanos = sinceNanos;
        }
    }

    /**
     * @param capacity the budget, in bytes, at least 1
     * @param lowWatermark once saturated, admit again only when the admitted bytes fall to this, in
     *     bytes, in {@code [0, capacity)}
     * @param ticker the clock of the wait times
     * @throws IllegalArgumentException if out of range
     */
    public ByteBudget(long capacity, long lowWatermark, Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker);
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        if (lowWatermark < 0 || lowWatermark >= capacity) {
            throw new IllegalArgumentException("lowWatermark must be in [0, " + capacity + "): " + lowWatermark);
        }
        this.capacity = capacity;
        this.lowWatermark = lowWatermark;
    }

    /**
     * A budget that never refuses ({@code kpipe.max.inflight.bytes} not configured): every reservation and read is
     * admitted at once and nobody ever waits, but the accounting ({@link #used()}, {@link #peak()}) still runs, so
     * that a caller never needs to ask whether a budget is present.
     *
     * @param ticker the clock of the wait times (there are none)
     * @return a new unbounded budget: capacity {@link Long#MAX_VALUE} / 2 (room for any sum of sizes without
     *     overflow)
     */
    public static ByteBudget unbounded(Ticker ticker) {
        long capacity = Long.MAX_VALUE / 2;
        return new ByteBudget(capacity, capacity - 1, ticker);
    }

    /**
     * Reserves bytes for a connection's next request. On refusal the waiter is queued (once) and
     * later {@linkplain Waiter#admitted() admitted} with the reservation granted.
     *
     * @param waiter the connection
     * @param bytes the estimate, in bytes; clamped to [1, capacity]
     * @return the bytes reserved, or 0 if refused (the waiter is queued)
     */
    public synchronized long tryReserve(Waiter waiter, long bytes) {
        Objects.requireNonNull(waiter);
        long want = clamp(bytes);
        Entry head = waiters.peekFirst();
        if (head != null && head.waiter == waiter) {
            // the head retries by itself: it keeps its place
            return 0;
        }
        if (head == null && admits(want)) {
            take(want);
            return want;
        }
        for (Entry e : waiters) {
            if (e.waiter == waiter) {
                return 0;
            }
        }
        waiters.addLast(new Entry(waiter, want, ticker.nanos()));
        waiting = waiters.size();
        waitsStarted++;
        return 0;
    }

    /**
     * Admits a request that was read before its connection held a reservation (the request that
     * upgrades a classic connection to pipelined mode), if the budget admits it now and no connection
     * waits: it must not overtake waiters, nor push the budget past its capacity. Its actual size is
     * charged, so a request larger than the capacity is admitted only alone.
     *
     * @param bytes the request's size, in bytes
     * @return true if the bytes are now charged (release them when the response is written); false if
     *     nothing was charged
     */
    public synchronized boolean tryAdmitRead(long bytes) {
        if (!waiters.isEmpty() || !admits(clamp(bytes))) {
            return false;
        }
        if (bytes >= capacity && used == 0) {
            oversizeAdmitted++;
        }
        take(Math.max(0, bytes));
        return true;
    }

    /**
     * Replaces a reservation by the actual size of the request read (which may be larger: Kafka does
     * not tell the size before the read).
     *
     * @param reserved the reservation being settled, in bytes (0 if none: the bytes are charged)
     * @param actual the request's size, in bytes
     */
    public void settle(long reserved, long actual) {
        if (actual >= capacity) {
            synchronized (this) {
                oversizeAdmitted++;
            }
        }
        long delta = actual - reserved;
        if (delta < 0) {
            release(-delta);
        } else if (delta > 0) {
            synchronized (this) {
                take(delta);
            }
        }
    }

    /**
     * Returns bytes to the budget and admits waiters in FIFO order while there is room.
     *
     * @param bytes the bytes, as reserved or settled
     */
    public void release(long bytes) {
        if (bytes <= 0) {
            return;
        }
        Waiter[] admitted;
        synchronized (this) {
            used -= bytes;
            if (used < 0) {
                throw new IllegalStateException("budget released more than it admitted: used=" + used);
            }
            if (saturated && used <= lowWatermark) {
                saturated = false;
            }
            admitted = admitWaiters();
        }
        for (Waiter w : admitted) {
            w.admitted();
        }
    }

    /**
     * Forgets a waiter (its connection closed).
     *
     * @param waiter the connection
     * @return true if it was still waiting; false if it was not queued, or was admitted already (its
     *     reservation is then held and must be released by the caller)
     */
    public boolean cancel(Waiter waiter) {
        Waiter[] admitted;
        boolean removed;
        synchronized (this) {
            removed = waiters.removeIf(e -> e.waiter == waiter);
            waiting = waiters.size();
            admitted = admitWaiters();
        }
        for (Waiter w : admitted) {
            w.admitted();
        }
        return removed;
    }

    private Waiter[] admitWaiters() {
        int n = 0;
        Waiter[] out = null;
        Entry head;
        while ((head = waiters.peekFirst()) != null && admits(head.bytes)) {
            waiters.pollFirst();
            waiting = waiters.size();
            take(head.bytes);
            waitNanosTotal += ticker.nanos() - head.sinceNanos;
            if (out == null) {
                out = new Waiter[Math.min(waiters.size() + 1, 16)];
            } else if (n == out.length) {
                out = java.util.Arrays.copyOf(out, n * 2);
            }
            out[n++] = head.waiter;
        }
        return out == null ? NONE : (n == out.length ? out : java.util.Arrays.copyOf(out, n));
    }

    private static final Waiter[] NONE = new Waiter[0];

    private boolean admits(long want) {
        if (saturated) {
            return false;
        }
        return used == 0 || used + want <= capacity;
    }

    /** Takes bytes: an admitted reservation, or what a request read exceeds its reservation by (settle). */
    private void take(long bytes) {
        used += bytes;
        if (used > peak) {
            peak = used;
        }
        if (used >= capacity) {
            saturated = true;
        }
    }

    /**
     * @param bytes a wanted reservation, in bytes
     * @return what {@link #tryReserve} reserves for it: clamped to [1, capacity]
     */
    public long clamp(long bytes) {
        return Math.max(1, Math.min(bytes, capacity));
    }

    /** @return the capacity, in bytes */
    public long capacity() {
        return capacity;
    }

    /**
     * Changes the capacity and the low watermark ({@code kpipe.max.inflight.bytes} altered at runtime). Bytes
     * already admitted stay admitted: if they reach the new capacity the budget is saturated until they fall to the
     * new low watermark; if it grows, the waiters that now fit are admitted at once, in FIFO order. Queued
     * reservations keep the size they were clamped to when they started waiting (a reservation larger than a
     * shrunk capacity is admitted alone, as usual). Thread: any; {@link Waiter#admitted()} runs on this thread, no
     * lock held.
     *
     * @param capacity the new budget, in bytes, at least 1
     * @param lowWatermark the new low watermark, in bytes, in {@code [0, capacity)}
     * @throws IllegalArgumentException if out of range; nothing changes then
     */
    public void capacity(long capacity, long lowWatermark) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        if (lowWatermark < 0 || lowWatermark >= capacity) {
            throw new IllegalArgumentException("lowWatermark must be in [0, " + capacity + "): " + lowWatermark);
        }
        Waiter[] admitted;
        synchronized (this) {
            this.capacity = capacity;
            this.lowWatermark = lowWatermark;
            if (saturated && used <= lowWatermark) {
                saturated = false;
            }
            if (used >= capacity) {
                saturated = true;
            }
            admitted = admitWaiters();
        }
        for (Waiter w : admitted) {
            w.admitted();
        }
    }

    /** @return bytes reserved or admitted now */
    public synchronized long used() {
        return used;
    }

    /** @return the most bytes ever reserved or admitted at once */
    public synchronized long peak() {
        return peak;
    }

    /** @return connections waiting now; takes no lock (a volatile read) */
    public int waiting() {
        return waiting;
    }

    /** @return waits started since creation */
    public synchronized long waitsStarted() {
        return waitsStarted;
    }

    /** @return total time admitted waiters waited, in nanoseconds */
    public synchronized long waitNanosTotal() {
        return waitNanosTotal;
    }

    /** @return requests read that were at least as large as the whole budget (each admitted alone) */
    public synchronized long oversizeAdmitted() {
        return oversizeAdmitted;
    }
}
