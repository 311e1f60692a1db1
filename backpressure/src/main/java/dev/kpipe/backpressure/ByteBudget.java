// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static dev.kpipe.backpressure.BudgetLimits.QUEUED;
import static dev.kpipe.backpressure.BudgetLimits.usedOf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.LongPredicate;

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
 *
 * <p><b>Lock-free while nobody waits</b>: bytes in use, saturation and a {@code QUEUED} bit share one CAS'd word; the
 * monitor only queues, admits or cancels waiters and changes the capacity. Why no wake-up is lost and no reservation
 * overtakes the queue: {@code docs/core.md}, "The byte budget's fast path".
 */
public final class ByteBudget {

    /** A connection waiting for budget. */
    public interface Waiter {
        /** Its reservation was granted; called once per granted wait, on any thread, no lock held. */
        void admitted();
    }

    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(ByteBudget.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Replaced as one by {@link #capacity(long, long)}, under the monitor. */
    private volatile BudgetLimits limits;
    /**
     * The word ({@link BudgetLimits}): bytes in use, QUEUED, SATURATED; changed only by CAS. {@code QUEUED} changes only
     * under the monitor; outside its critical sections it is set exactly while {@link #waiters} is not empty.
     */
    private volatile long state;
    /** The peak and the oversize requests. */
    private final BudgetStats stats = new BudgetStats();
    /** The FIFO of waiters and the wait statistics; guarded by the monitor. */
    private final BudgetWaiters waiters;
    /** {@link #takeIfAdmits}, made once: admitting waiters allocates only the array of those admitted. */
    private final LongPredicate take = this::takeIfAdmits;

    /**
     * @param capacity the budget, in bytes, at least 1
     * @param lowWatermark once saturated, admit again only when the admitted bytes fall to this, in
     *     bytes, in {@code [0, capacity)}
     * @param ticker the clock of the wait times
     * @throws IllegalArgumentException if out of range
     */
    public ByteBudget(long capacity, long lowWatermark, Ticker ticker) {
        this.waiters = new BudgetWaiters(Objects.requireNonNull(ticker));
        this.limits = new BudgetLimits(capacity, lowWatermark);
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
     * later {@linkplain Waiter#admitted() admitted} with the reservation granted. Lock-free while nobody waits.
     *
     * @param waiter the connection
     * @param bytes the estimate, in bytes; clamped to [1, capacity]
     * @return the bytes reserved (&gt; 0); or, refused, minus the bytes the waiter is queued for (&lt; 0), which is
     *     what its admission later takes: the caller records that size, not its own clamp of {@code bytes}, as the
     *     capacity may change in between
     */
    public long tryReserve(Waiter waiter, long bytes) {
        Objects.requireNonNull(waiter);
        BudgetLimits l = limits;
        long want = l.clamp(bytes);
        long s;
        while (((s = state) & QUEUED) == 0 && l.admits(s, want)) {
            if (STATE.compareAndSet(this, s, l.taken(s, want))) {
                took(usedOf(s) + want, l);
                return want;
            }
        }
        return reserveQueued(waiter, bytes);
    }

    /** {@link #tryReserve} when someone waits or the budget refuses: under the monitor, queues the waiter. */
    private synchronized long reserveQueued(Waiter waiter, long bytes) {
        long want = limits.clamp(bytes);
        if (waiters.size != 0) {
            long queued = waiters.bytesOf(waiter);
            if (queued > 0) {
                return -queued; // the head retries by itself: it keeps its place (as does any waiter already queued)
            }
            waiters.add(waiter, want);
            return -want;
        }
        // QUEUED first: every release from now on takes the monitor (and admits us); then re-check the word, which
        // holds every release before. If anything below throws, QUEUED must not stay set with nobody queued.
        setQueued(true);
        boolean queued = false;
        try {
            if (takeIfAdmits(want)) {
                return want;
            }
            waiters.add(waiter, want);
            queued = true;
            return -want;
        } finally {
            if (!queued) {
                setQueued(false);
            }
        }
    }

    /**
     * Admits a request that was read before its connection held a reservation (the request that
     * upgrades a classic connection to pipelined mode), if the budget admits it now and no connection
     * waits: it must not overtake waiters, nor push the budget past its capacity. Its actual size is
     * charged, so a request larger than the capacity is admitted only alone. Lock-free while nobody waits.
     *
     * @param bytes the request's size, in bytes
     * @return true if the bytes are now charged (release them when the response is written); false if
     *     nothing was charged
     */
    public boolean tryAdmitRead(long bytes) {
        while (true) {
            BudgetLimits l = limits;
            long s = state;
            if ((s & QUEUED) != 0) {
                synchronized (this) {
                    if (waiters.size != 0) {
                        return false;
                    }
                    if ((state & QUEUED) != 0) {
                        setQueued(false); // set with nobody queued and nobody deciding (we hold the monitor): stray
                    }
                }
                continue; // a reservation was deciding under the monitor: it has decided
            }
            if (!l.admits(s, l.clamp(bytes))) {
                return false;
            }
            long charge = Math.max(0, bytes);
            if (STATE.compareAndSet(this, s, l.taken(s, charge))) {
                if (bytes >= l.capacity() && usedOf(s) == 0) {
                    stats.oversizeAdmitted();
                }
                took(usedOf(s) + charge, l);
                return true;
            }
        }
    }

    /**
     * Replaces a reservation by the actual size of the request read (which may be larger: Kafka does
     * not tell the size before the read). Lock-free unless the release admits waiters.
     *
     * @param reserved the reservation being settled, in bytes (0 if none: the bytes are charged)
     * @param actual the request's size, in bytes
     */
    public void settle(long reserved, long actual) {
        BudgetLimits l = limits;
        if (actual >= l.capacity()) {
            stats.oversizeAdmitted();
        }
        long delta = actual - reserved;
        if (delta < 0) {
            release(-delta);
        } else if (delta > 0) {
            long s;
            do {
                s = state;
            } while (!STATE.compareAndSet(this, s, l.taken(s, delta)));
            took(usedOf(s) + delta, l);
        }
    }

    /**
     * Returns bytes to the budget and admits waiters in FIFO order while there is room. Lock-free while nobody
     * waits.
     *
     * @param bytes the bytes, as reserved or settled
     * @throws IllegalStateException if more is released than is in use (nothing changes then)
     */
    public void release(long bytes) {
        if (bytes <= 0) {
            return;
        }
        BudgetLimits l = limits;
        long s;
        do {
            s = state;
        } while (!STATE.compareAndSet(this, s, l.released(s, bytes)));
        // our CAS saw QUEUED: the waiters are admitted under the monitor (a waiter queued after it re-checks the word)
        if ((s & QUEUED) != 0 || limits != l) {
            reconcile();
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
        if (waiters.size == 0) {
            return false; // nobody is queued: it never was, or was admitted (before the volatile write we read)
        }
        Waiter[] admitted;
        boolean removed;
        synchronized (this) {
            removed = waiters.remove(waiter);
            admitted = admitWaiters();
        }
        tell(admitted);
        return removed;
    }

    /** After a change under limits that changed meanwhile, or a release while someone waits: fix and admit. */
    private void reconcile() {
        Waiter[] admitted;
        synchronized (this) {
            fixSaturation();
            admitted = admitWaiters();
        }
        tell(admitted);
    }

    private static void tell(Waiter[] admitted) {
        for (Waiter w : admitted) {
            w.admitted();
        }
    }

    /** Under the monitor: admits waiters from the head while they fit; clears QUEUED once none is left. */
    private Waiter[] admitWaiters() {
        Waiter[] admitted = waiters.admit(take);
        if (waiters.size == 0 && (state & QUEUED) != 0) {
            setQueued(false);
        }
        return admitted;
    }

    /** Under the monitor (whatever QUEUED says): takes the bytes if the budget admits them now. */
    private boolean takeIfAdmits(long want) {
        while (true) {
            BudgetLimits l = limits;
            long s = state;
            if (!l.admits(s, want)) {
                return false;
            }
            if (STATE.compareAndSet(this, s, l.taken(s, want))) {
                stats.raisePeak(usedOf(s) + want);
                return true;
            }
        }
    }

    /** Under the monitor: sets or clears QUEUED, keeping what concurrent CASes did to the rest of the word. */
    private void setQueued(boolean queued) {
        long s;
        do {
            s = state;
        } while (!STATE.compareAndSet(this, s, queued ? s | QUEUED : s & ~QUEUED));
    }

    /** Under the monitor: the saturation the current limits give the bytes in use (after a change of limits). */
    private void fixSaturation() {
        long s;
        long n;
        do {
            s = state;
            n = limits.resaturated(s);
        } while (n != s && !STATE.compareAndSet(this, s, n));
    }

    /** After a CAS that took bytes under limits {@code l}: the peak, and a reconcile if the limits changed meanwhile. */
    private void took(long used, BudgetLimits l) {
        stats.raisePeak(used);
        if (limits != l) {
            reconcile();
        }
    }

    /**
     * @param bytes a wanted reservation, in bytes
     * @return what {@link #tryReserve} reserves for it: clamped to [1, capacity]
     */
    public long clamp(long bytes) {
        return limits.clamp(bytes);
    }

    /** @return the capacity, in bytes */
    public long capacity() {
        return limits.capacity();
    }

    /**
     * Changes the capacity and the low watermark ({@code kpipe.max.inflight.bytes} altered at runtime). Bytes
     * already admitted stay admitted: if they reach the new capacity the budget is saturated until they fall to the
     * new low watermark; if it grows, the waiters that now fit are admitted at once, in FIFO order. Queued
     * reservations keep the size they were clamped to when they started waiting (a reservation larger than a
     * shrunk capacity is admitted alone, as usual). A reservation racing the change may be judged by the old
     * capacity (as if it came just before); the saturation is then corrected at once. Thread: any;
     * {@link Waiter#admitted()} runs on this thread, no lock held.
     *
     * @param capacity the new budget, in bytes, at least 1
     * @param lowWatermark the new low watermark, in bytes, in {@code [0, capacity)}
     * @throws IllegalArgumentException if out of range; nothing changes then
     */
    public void capacity(long capacity, long lowWatermark) {
        BudgetLimits changed = new BudgetLimits(capacity, lowWatermark);
        Waiter[] admitted;
        synchronized (this) {
            limits = changed;
            fixSaturation();
            admitted = admitWaiters();
        }
        tell(admitted);
    }

    /**
     * The invariants of the class comment, for tests and the connection dump: {@code QUEUED} is set exactly while
     * someone waits, the head of the queue does not fit now (else a wake-up was lost), and the budget is saturated
     * only above its low watermark. Takes the monitor.
     *
     * @return a description of the first violation, or {@code null} if they hold
     */
    public synchronized String invariantViolation() {
        return limits.violation(state, waiters.headBytes(), waiters.size);
    }

    /** @return bytes reserved or admitted now; takes no lock */
    public long used() {
        return usedOf(state);
    }

    /** @return the most bytes ever reserved or admitted at once; takes no lock */
    public long peak() {
        return stats.peak();
    }

    /** @return connections waiting now; takes no lock (a volatile read) */
    public int waiting() {
        return waiters.size;
    }

    /** @return waits started since creation; takes no lock */
    public long waitsStarted() {
        return waiters.started;
    }

    /** @return total time admitted waiters waited, in nanoseconds; takes no lock */
    public long waitNanosTotal() {
        return waiters.waitNanosTotal;
    }

    /** @return requests read that were at least as large as the whole budget (each admitted alone); takes no lock */
    public long oversizeAdmitted() {
        return stats.oversize();
    }
}
