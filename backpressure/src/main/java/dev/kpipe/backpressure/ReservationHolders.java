package dev.kpipe.backpressure;

import java.util.ArrayList;

/**
 * The reservations of one network thread's connections that hold bytes of the budget now ({@code reserved > 0}), in
 * no particular order, so that {@link Reservations#revokeIdle} looks only at those. Each knows its index: adding and
 * removing are O(1) and allocate nothing once the list has grown to its peak.
 *
 * <p>Thread: one network thread (not thread-safe).
 */
public final class ReservationHolders {

    private final ArrayList<Reservation> list = new ArrayList<>();

    /** @return how many are listed */
    public int size() {
        return list.size();
    }

    /** @return true if none is listed */
    public boolean isEmpty() {
        return list.isEmpty();
    }

    /**
     * @param i an index in {@code [0, size())}
     * @return the reservation listed there
     */
    public Reservation get(int i) {
        return list.get(i);
    }

    /** Lists a reservation that now holds bytes; no-op if listed. */
    void add(Reservation r) {
        if (r.holderIndex < 0) {
            r.holderIndex = list.size();
            list.add(r);
        }
    }

    /** Unlists a reservation that no longer holds bytes, in O(1) (the last one takes its index); no-op if not listed. */
    void remove(Reservation r) {
        int i = r.holderIndex;
        if (i < 0) {
            return;
        }
        Reservation last = list.remove(list.size() - 1);
        if (last != r) {
            list.set(i, last);
            last.holderIndex = i;
        }
        r.holderIndex = -1;
    }
}
