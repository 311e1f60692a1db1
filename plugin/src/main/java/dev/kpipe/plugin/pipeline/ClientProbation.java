// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * A connection's client as {@link ThrottledClients} knows it once seen throttled (a window opened on the connection,
 * or it was upgraded while its client was marked), and whether the connection is on <b>probation</b>: upgraded while
 * its client was marked, it reads its next request only once nothing of it is in flight, as stock Kafka reads one
 * request at a time ({@link WaitReason#CLIENT_THROTTLED}), until its client is unmarked.
 *
 * <p>Thread: the connection's network thread; {@link #onProbation()} any (racy, for the dump).
 */
final class ClientProbation {
    /** Its client's entry, or {@code null} if never seen throttled (then every query is this one field check). */
    private ThrottledClients.Entry entry;

    private volatile boolean probation;

    /** @param e its client's entry ({@code null}: the table was full); {@code probation}: upgraded while marked */
    void seen(ThrottledClients.Entry e, boolean probation) {
        this.entry = e;
        this.probation |= probation && e != null;
    }

    /** @return its client's entry if seen throttled, else {@code null} */
    ThrottledClients.Entry entry() {
        return entry;
    }

    /** @return true if it must not read now: on probation, its client marked, something in flight */
    boolean holds(boolean nothingInflight) {
        return entry != null && !nothingInflight && onProbation();
    }

    /** @return true while on probation and its client is marked */
    boolean onProbation() {
        ThrottledClients.Entry e = entry;
        return probation && e != null && e.marked();
    }
}
