// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.quotas;

/**
 * Counts the open quota throttle windows of one pipelined connection. Kafka sends a
 * {@code StartThrottlingResponse} before a throttled response and an {@code EndThrottlingResponse}
 * when its throttle time has passed (KIP-219); with several requests in flight, windows can overlap,
 * so they are counted rather than flagged. Kafka's own quota managers stay authoritative: this only
 * keeps the connection muted while any window is open, and measures how long the connection was throttled (from the
 * first window opening while none was open to the last one closing; overlapping windows count once), on the clock
 * its caller passes in ({@code throttle-time-ms-total}).
 *
 * <p>Invariant: {@link #open()} is never negative; {@link #throttled()} exactly while it is positive, and the start
 * of that span is known.
 *
 * <p>Not thread-safe: owned by the connection's network thread.
 */
public final class ThrottleWindows {
    private int open;
    /** When the current throttled span began (the caller's clock, ns); meaningful while {@link #throttled()}. */
    private long sinceNanos;

    /** A throttle window started. */
    public void start() {
        open++;
    }

    /**
     * A throttle window ended. An end without a start (a window that started before kpipe owned the
     * connection) is ignored.
     *
     * @return true if it matched an open window
     */
    public boolean end() {
        if (open == 0) {
            return false;
        }
        open--;
        return true;
    }

    /** @return true while at least one window is open */
    public boolean throttled() {
        return open > 0;
    }

    /** @return the number of open windows */
    public int open() {
        return open;
    }

    /**
     * A throttle window started (KIP-219 {@code StartThrottlingResponse}).
     *
     * @param nowNanos the caller's clock, ns
     * @return true if it is the first open window: the connection is throttled from now on
     */
    public boolean started(long nowNanos) {
        if (open == 0) {
            sinceNanos = nowNanos;
        }
        open++;
        return open == 1;
    }

    /**
     * A throttle window ended (KIP-219 {@code EndThrottlingResponse}); an end without a start is ignored.
     *
     * @param nowNanos the caller's clock, ns
     * @return how long the connection was throttled, ns, if this closed its last open window; -1 otherwise
     */
    public long ended(long nowNanos) {
        return end() && open == 0 ? nowNanos - sinceNanos : -1;
    }

    /**
     * The connection leaves kpipe (closed, or handed back) with its windows as they are.
     *
     * @param nowNanos the caller's clock, ns
     * @return how long it has been throttled, ns, if a window is open; -1 otherwise
     */
    public long throttledFor(long nowNanos) {
        return open > 0 ? nowNanos - sinceNanos : -1;
    }
}
