// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * The invariants of one {@link ConnectionPipeline}'s bookkeeping, stated once: the fake broker checks them after every
 * step of every explored and generated run.
 */
final class ConnectionInvariants {
    private ConnectionInvariants() {}

    /**
     * The invariants of one connection's bookkeeping. Network thread.
     * <ul>
     *   <li>{@code held} is set exactly in {@code DRAINING_EXCLUSIVE} and {@code DRAINING_REAUTHENTICATION}, and may
     *       be set in {@code CLOSING_AFTER_DRAIN};</li>
     *   <li>the requests in flight keep theirs ({@link InflightRequests#invariantViolation}): one send outstanding at
     *       most, for the oldest; held responses counted; bytes summed;</li>
     *   <li>the reservation keeps its own: never negative, never held while waiting for the budget, held exactly when
     *       the processor lists the connection as a holder;</li>
     *   <li>a terminal connection ({@code HANDED_BACK}, {@code CLOSED}) holds nothing: no request, no held request, no
     *       reservation, no wait.</li>
     * </ul>
     *
     * @param c the connection
     * @return a description of the first violation, or {@code null} if every invariant holds
     */
    static String violation(ConnectionPipeline<?, ?> c) {
        ConnectionState s = c.state();
        boolean heldAllowed = s == ConnectionState.CLOSING_AFTER_DRAIN;
        boolean heldRequired =
                s == ConnectionState.DRAINING_EXCLUSIVE || s == ConnectionState.DRAINING_REAUTHENTICATION;
        if (heldRequired ? c.held() == null : c.held() != null && !heldAllowed) {
            return s + " with held=" + c.held();
        }
        String v = c.partsViolation();
        if (v == null
                && !s.owned()
                && (!c.inflight().isEmpty() || c.held() != null || c.reserved() != 0 || c.budgetWaiting())) {
            v = s + " but still holds state";
        }
        return v;
    }
}
