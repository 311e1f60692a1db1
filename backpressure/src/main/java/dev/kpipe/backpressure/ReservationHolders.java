// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

/**
 * The reservations of one network thread's connections that hold bytes of the budget now ({@code reserved > 0}), in the
 * order they were granted (oldest first), so that {@link Reservations#revokeIdle} looks only at the ones old enough to
 * be revoked and stops at the first younger one: a round costs in proportion to the reservations it revokes, not to
 * every idle connection. Intrusive (each {@link Reservation} is its own node): adding and removing are O(1) and
 * allocate nothing.
 *
 * <p>Invariant ({@link #invariantViolation()}): the list is ordered by grant time and grant round, both
 * non-decreasing from the first to the last, since a reservation is appended when granted ({@code Reservations.holds})
 * with its thread's clock and round, which only move forward.
 *
 * <p>Thread: one network thread (not thread-safe).
 */
public final class ReservationHolders {

    private Reservation first;
    private Reservation last;
    private int size;

    /** @return how many are listed */
    public int size() {
        return size;
    }

    /** @return true if none is listed */
    public boolean isEmpty() {
        return size == 0;
    }

    /** @return the reservation granted first of those listed, or {@code null} if none */
    public Reservation first() {
        return first;
    }

    /**
     * @param r a listed reservation
     * @return the one listed after it (granted next), or {@code null} if it is the last
     */
    public Reservation next(Reservation r) {
        return r.nextHolder;
    }

    /** Appends a reservation just granted; no-op if listed. */
    void add(Reservation r) {
        if (r.listed) {
            return;
        }
        r.listed = true;
        r.prevHolder = last;
        r.nextHolder = null;
        if (last == null) {
            first = r;
        } else {
            last.nextHolder = r;
        }
        last = r;
        size++;
    }

    /** Unlists a reservation that no longer holds bytes, in O(1); no-op if not listed. */
    void remove(Reservation r) {
        if (!r.listed) {
            return;
        }
        Reservation p = r.prevHolder;
        Reservation n = r.nextHolder;
        if (p == null) {
            first = n;
        } else {
            p.nextHolder = n;
        }
        if (n == null) {
            last = p;
        } else {
            n.prevHolder = p;
        }
        r.prevHolder = null;
        r.nextHolder = null;
        r.listed = false;
        size--;
    }

    /**
     * @param r a reservation
     * @return true if this list holds it (a walk: O(size); for invariant checks)
     */
    public boolean contains(Reservation r) {
        for (Reservation x = first; x != null; x = x.nextHolder) {
            if (x == r) {
                return true;
            }
        }
        return false;
    }

    /**
     * Checks the links, the count and the order (O(size); for tests and the fake broker).
     *
     * @return a description of the first violation, or {@code null} if none
     */
    public String invariantViolation() {
        int n = 0;
        Reservation prev = null;
        for (Reservation x = first; x != null; x = x.nextHolder) {
            if (!x.listed || x.prevHolder != prev) {
                return "holder " + n + " listed=" + x.listed + " with a broken link";
            }
            if (prev != null
                    && (x.reservedAtNanos < prev.reservedAtNanos || x.reservedAtRound < prev.reservedAtRound)) {
                return "holder " + n + " granted at " + x.reservedAtNanos + " ns, round " + x.reservedAtRound
                        + ", before the one listed ahead of it (" + prev.reservedAtNanos + " ns, round "
                        + prev.reservedAtRound + ")";
            }
            prev = x;
            n++;
        }
        if (prev != last || n != size) {
            return "holders: " + n + " linked, size " + size + ", last " + (prev == last ? "right" : "wrong");
        }
        return null;
    }
}
