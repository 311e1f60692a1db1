// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One connection's reservation of the broker-wide {@link ByteBudget} for the request it reads next, granted or awaited
 * ({@link Reservations} changes it). One per connection, made when the connection is pipelined; nothing is allocated
 * per request.
 *
 * <p>Invariants ({@link #invariantViolation()}): never {@link #reserved()} and {@link #waiting()} at once; listed in
 * its {@link ReservationHolders} exactly while {@code reserved() > 0}; every grant of the budget
 * ({@link #granted()}) is used or released once ({@link #grantsConsumed()}).
 *
 * <p>Thread: the connection's network thread, except {@link #granted()} (the budget's releasing thread). Another
 * thread may read {@link #waiting()} and {@link #reserved()} racily (plain boolean and long fields written by one
 * thread: a moment stale at worst; the connection dump).
 */
public final class Reservation {

    /**
     * The connection that holds the reservation. As the budget's {@link ByteBudget.Waiter}, its {@code admitted()}
     * must call {@link Reservation#granted()} first, then hand the news to its network thread.
     */
    public interface Holder extends ByteBudget.Waiter {
        /** @return true if it is still pipelined or draining (not handed back to Kafka, not closed) */
        boolean owned();

        /** @return true if it reads now (unmuted, not draining): an idle reservation may be revoked from it */
        boolean reading();

        /** Its idle reservation is revoked: it must stop reading (mute) and be evaluated again. Network thread. */
        void revoke();
    }

    final Holder holder;
    final ReservationHolders holders;
    /** Bytes reserved for the next read, or 0. */
    long reserved;
    /** When {@link #reserved} was granted (the reservations' clock, ns). */
    long reservedAtNanos;
    /** The holder's processor round in which {@link #reserved} was granted. */
    long reservedAtRound;
    /** Listed in {@link #holders}. */
    boolean listed;
    /** The reservation listed before this one in {@link #holders} (granted earlier), or {@code null}. */
    Reservation prevHolder;
    /** The reservation listed after this one in {@link #holders} (granted later), or {@code null}. */
    Reservation nextHolder;
    /** The reservation asked for while waiting for the budget, bytes. */
    long wanted;
    /** Queued in the budget's FIFO. */
    boolean waiting;
    /** Grants of the budget so far, counted by the releasing thread in {@link #granted()}. */
    private final AtomicInteger grants = new AtomicInteger();
    /** Grants used or released by the network thread (a grant can be counted after it was released). */
    int grantsConsumed;

    /**
     * @param holder the connection (the budget's waiter)
     * @param holders the list of its network thread's connections that hold a reservation
     */
    public Reservation(Holder holder, ReservationHolders holders) {
        this.holder = holder;
        this.holders = holders;
    }

    /** The budget granted the awaited reservation. Thread: any (the releasing thread), from {@code admitted()}. */
    public void granted() {
        grants.incrementAndGet();
    }

    /** @return true if a grant arrived that the network thread has not used or released yet (and uses it) */
    boolean takeGrant() {
        if (grants.get() - grantsConsumed > 0) {
            grantsConsumed++;
            return true;
        }
        return false;
    }

    /** @return bytes reserved for the next read, or 0 */
    public long reserved() {
        return reserved;
    }

    /** @return when the reservation was granted (the reservations' clock, ns); meaningful while {@link #reserved()} */
    public long reservedAtNanos() {
        return reservedAtNanos;
    }

    /** @return the holder's processor round in which the reservation was granted */
    public long reservedAtRound() {
        return reservedAtRound;
    }

    /** @return the reservation asked for while {@link #waiting()}, bytes */
    public long wanted() {
        return wanted;
    }

    /** @return true while queued in the budget's FIFO */
    public boolean waiting() {
        return waiting;
    }

    /** @return grants of the budget counted so far ({@link #granted()}) */
    public int grants() {
        return grants.get();
    }

    /** @return grants used or released by the network thread */
    public int grantsConsumed() {
        return grantsConsumed;
    }

    /** @return true while listed in its {@link ReservationHolders} */
    public boolean listed() {
        return listed;
    }

    /**
     * The invariants of the class comment that one reservation can check alone. Network thread.
     *
     * @return a description of the first violation, or {@code null} if they hold
     */
    public String invariantViolation() {
        if (reserved < 0 || (reserved > 0 && waiting)) {
            return "reserved=" + reserved + " waitingForBudget=" + waiting;
        }
        boolean linked = listed && (prevHolder == null ? holders.first() == this : prevHolder.nextHolder == this);
        if (listed != (reserved > 0) || listed != linked || (!listed && (prevHolder != null || nextHolder != null))) {
            return "reserved=" + reserved + " listed=" + listed + " linked=" + linked;
        }
        return null;
    }

    @Override
    public String toString() {
        return "reserved=" + reserved + " waitingForBudget=" + waiting;
    }
}
