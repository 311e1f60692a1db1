package dev.kpipe.plugin.pipeline;

/**
 * The invariants of one {@link ConnectionPipeline}'s bookkeeping, stated once: {@code ConnectionPipeline.invariantsHold}
 * asserts them, and the fake broker checks them after every step of every explored and generated run.
 */
final class ConnectionInvariants {
    private ConnectionInvariants() {}

    /**
     * The invariants of one connection's bookkeeping, checked by the fake broker after every step. Network thread.
     * <ul>
     *   <li>{@code held} is set exactly in {@code DRAINING_EXCLUSIVE} and {@code DRAINING_REAUTHENTICATION}, and may
     *       be set in {@code CLOSING_AFTER_DRAIN};</li>
     *   <li>a send is outstanding only for a head slot with a response; {@code heldResponses} counts the other slots
     *       with a response;</li>
     *   <li>{@code inflightBytes} is the sum of the slots' bytes; reservations are never negative, never held while
     *       waiting for the budget, and held exactly when the processor lists the connection as a holder;</li>
     *   <li>a terminal connection ({@code HANDED_BACK}, {@code CLOSED}) holds nothing: no slot, no request, no
     *       reservation, no wait.</li>
     * </ul>
     *
     * @param c the connection
     * @return a description of the first violation, or {@code null} if every invariant holds
     */
    static String violation(ConnectionPipeline c) {
        ConnectionState s = c.state();
        boolean heldAllowed = s == ConnectionState.CLOSING_AFTER_DRAIN;
        boolean heldRequired =
                s == ConnectionState.DRAINING_EXCLUSIVE || s == ConnectionState.DRAINING_REAUTHENTICATION;
        if (heldRequired ? c.held == null : c.held != null && !heldAllowed) {
            return s + " with held=" + c.held;
        }
        Slot head = c.slots.peekFirst();
        if (c.sendOutstanding && (head == null || head.response == null)) {
            return "a send outstanding without a head response";
        }
        long bytes = 0;
        int withResponse = 0;
        for (Slot sl : c.slots) {
            bytes += sl.bytes;
            withResponse += sl.response != null && !(sl == head && c.sendOutstanding) ? 1 : 0;
        }
        if (bytes != c.inflightBytes) {
            return "inflightBytes=" + c.inflightBytes + " but its slots hold " + bytes;
        }
        String reservationViolation = c.reservation.invariantViolation();
        if (reservationViolation != null) {
            return reservationViolation;
        }
        if (!s.owned()) {
            if (!c.slots.isEmpty() || c.held != null || c.reservation.reserved() != 0 || c.reservation.waiting()) {
                return s + " but still holds state";
            }
        } else if (withResponse != c.heldResponses) {
            return "heldResponses=" + c.heldResponses + " but " + withResponse + " slots hold a response";
        }
        return null;
    }
}
