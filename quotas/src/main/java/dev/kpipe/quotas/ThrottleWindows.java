package dev.kpipe.quotas;

/**
 * Counts the open quota throttle windows of one pipelined connection. Kafka sends a
 * {@code StartThrottlingResponse} before a throttled response and an {@code EndThrottlingResponse}
 * when its throttle time has passed (KIP-219); with several requests in flight, windows can overlap,
 * so they are counted rather than flagged. Kafka's own quota managers stay authoritative: this only
 * keeps the connection muted while any window is open.
 *
 * <p>Not thread-safe: owned by the connection's network thread.
 */
public final class ThrottleWindows {
    private int open;

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
}
