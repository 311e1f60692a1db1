// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import java.util.concurrent.atomic.LongAdder;

/**
 * Each pipelined connection's {@link Reservation} of the broker-wide byte budget ({@code kpipe.max.inflight.bytes}) for
 * the request it reads next: Kafka learns a request's size only by reading it, so a connection is unmuted only once it
 * holds an estimate (its largest request so far), which the actual size then settles ({@link ByteBudget#settle}).
 *
 * <p>Invariants (checked by {@link Reservation#invariantViolation()}): a connection holds a reservation
 * ({@code reserved > 0}) exactly when its {@link ReservationHolders} lists it; it never holds one while it waits in
 * the budget's FIFO ({@code waiting}); every reservation granted is either settled by a read or released exactly once
 * ({@link #release}, {@link #revokeIdle}).
 *
 * <p>Thread: the connection's network thread; the budget's {@link ByteBudget.Waiter#admitted()} callback reaches it
 * through its holder ({@link Reservation.Holder}).
 */
public final class Reservations {

    /** How long a reservation may stay unused while others wait for the budget: 20 ms. */
    public static final long IDLE_NANOS = 20_000_000L;

    private final ByteBudget budget;
    private final Ticker ticker;
    private final LongAdder revoked;
    private final LongAdder faults;

    /**
     * @param budget the broker-wide budget (unbounded when none is configured)
     * @param ticker the clock of idle reservations
     * @param revoked where idle reservations revoked are counted ({@code budget-reservation-revoked-total})
     * @param faults where a reservation found on a connection no longer owned is counted ({@code plugin-fault-total})
     */
    public Reservations(ByteBudget budget, Ticker ticker, LongAdder revoked, LongAdder faults) {
        this.budget = budget;
        this.ticker = ticker;
        this.revoked = revoked;
        this.faults = faults;
    }

    /**
     * Charges a request read before its connection held a reservation (the request that upgrades a classic
     * connection), if the budget admits it now ({@link ByteBudget#tryAdmitRead}).
     *
     * @param bytes the request's size
     * @return true if charged
     */
    public boolean tryAdmitRead(int bytes) {
        return budget.tryAdmitRead(bytes);
    }

    /**
     * A request was read: its actual size replaces the connection's reservation (charged already by
     * {@link #tryAdmitRead} for the request that upgraded the connection).
     *
     * @param r the connection's reservation
     * @param bytes the request's size
     * @param upgrade whether this request upgraded the connection
     */
    public void settle(Reservation r, int bytes, boolean upgrade) {
        if (!upgrade) {
            budget.settle(r.reserved, bytes);
        }
        r.reserved = 0;
        r.holders.remove(r);
    }

    /**
     * Makes sure the connection holds a reservation of the global budget for its next read.
     *
     * @param r the connection's reservation
     * @param estimate the estimate of its next request (its largest so far), bytes
     * @param round its processor's round now (see {@link #revokeIdle})
     * @return true if it holds one; false if it waits (it is admitted later, in FIFO order)
     */
    public boolean reserve(Reservation r, long estimate, long round) {
        if (r.reserved > 0) {
            return true;
        }
        if (r.waiting) {
            if (!r.takeGrant()) {
                return false;
            }
            r.waiting = false;
            holds(r, r.wanted, round);
            return true;
        }
        long want = Math.max(1, estimate);
        long got = budget.tryReserve(r.holder, want);
        if (got > 0) {
            holds(r, got, round);
            return true;
        }
        r.waiting = true;
        r.wanted = -got; // the size the budget queued, which its admission takes
        return false;
    }

    private void holds(Reservation r, long bytes, long round) {
        r.reserved = bytes;
        r.reservedAtNanos = ticker.nanos();
        r.reservedAtRound = round;
        r.holders.add(r);
    }

    /**
     * Returns the connection's reservation for its next read, granted or still awaited.
     *
     * @param r the connection's reservation
     */
    public void release(Reservation r) {
        if (r.waiting) {
            r.waiting = false;
            if (!budget.cancel(r.holder)) {
                // Admitted meanwhile: the reservation is held. Its grant is consumed here, even if
                // admitted() has not counted it yet.
                r.grantsConsumed++;
                budget.release(r.wanted);
            }
        }
        budget.release(r.reserved);
        r.reserved = 0;
        r.holders.remove(r);
    }

    /**
     * While connections wait for the byte budget, a connection that reserved bytes for its next
     * request {@link #IDLE_NANOS} or more ago, with at least one poll of its processor
     * since (so a slow round cannot revoke a grant before its request could be read), and has read
     * nothing since gives them
     * back and waits in line again (muted): an idle connection must not hold budget that others
     * wait for, nor keep an oversize reservation from ever seeing the budget empty.
     *
     * <p>The holders are listed in the order they were granted ({@link ReservationHolders}), so the walk stops at the
     * first one granted less than {@link #IDLE_NANOS} or two rounds ago: every later one is younger. A round looks at
     * the reservations it revokes and at the old ones it cannot revoke (muted for another reason: throttled, storage
     * pressure, draining), never at the young ones, however many connections are idle. A holder no longer owned
     * ("cannot happen") is found once its reservation is old.
     *
     * @param holders the reservations held on one processor, at the start of its round
     * @param round that round
     */
    public void revokeIdle(ReservationHolders holders, long round) {
        if (budget.waiting() == 0) {
            return;
        }
        long now = ticker.nanos();
        Reservation r = holders.first();
        while (r != null && now - r.reservedAtNanos >= IDLE_NANOS && round - r.reservedAtRound >= 2) {
            Reservation next = holders.next(r);
            Reservation.Holder c = r.holder;
            if (!c.owned()) {
                // Cannot happen: closing or handing back a connection releases its reservation. Never mute a
                // connection kpipe does not own; give its reservation back.
                budget.release(r.reserved);
                r.reserved = 0;
                holders.remove(r);
                faults.increment();
            } else if (c.reading()) {
                c.revoke();
                long bytes = r.reserved;
                r.reserved = 0;
                holders.remove(r);
                revoked.increment();
                budget.release(bytes);
            }
            r = next;
        }
    }
}
