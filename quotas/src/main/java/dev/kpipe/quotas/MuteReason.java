package dev.kpipe.quotas;

/**
 * The independent reasons for which a pipelined connection stays muted (no further request read).
 * A connection is unmuted only when no reason holds; see {@link MuteReasons}.
 */
public enum MuteReason {
    /** The last request read is still in the dispatch phase (its handler has not returned). */
    AWAITING_DISPATCH,
    /** An exclusive request is held until every earlier response is written (downgrade). */
    DRAINING,
    /** A client quota throttle window (KIP-219) is open for the connection. */
    THROTTLED,
    /** The connection's in-flight request or byte limit is reached. */
    BACK_PRESSURE;

    final int bit() {
        return 1 << ordinal();
    }
}
