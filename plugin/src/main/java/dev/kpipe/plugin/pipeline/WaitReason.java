package dev.kpipe.plugin.pipeline;

/**
 * Why a connection kpipe owns is not reading its next request, as the connection dump shows it ({@link #label()}).
 * Derived from the connection's state ({@link ConnectionSnapshot}); several can hold at once.
 */
public enum WaitReason {
    /**
     * Its last request is in the dispatch phase: queued in the broker's request channel, or a request handler has not
     * returned from {@code KafkaApis.handle} yet.
     */
    AWAITING_DISPATCH("awaiting-dispatch"),
    /**
     * Its last request is a transactional produce whose {@code KafkaApis.handle} returned while the broker verifies it
     * with the transaction coordinator (KIP-890): the next request is read once the append, run later in a
     * {@code CallbackRequest}, happened ({@code deferred-dispatch-total}).
     */
    AWAITING_APPEND("awaiting-append"),
    /** It waits in line for the broker-wide in-flight byte budget ({@code kpipe.max.inflight.bytes}). */
    BUDGET("budget"),
    /**
     * It is at a per-connection limit ({@code kpipe.max.inflight.requests.per.connection} or
     * {@code kpipe.max.inflight.bytes.per.connection}).
     */
    INFLIGHT_LIMIT("inflight-limit"),
    /**
     * The storage side is saturated: the produce purgatory above {@code kpipe.max.delayed.produce.requests}, the request
     * queue 80% full ({@code queued.max.requests}), or {@code kpipe.storage.pressure.class}.
     */
    STORAGE_PRESSURE("storage-pressure"),
    /** A client quota throttle window is open (KIP-219). */
    THROTTLED("throttled"),
    /** Draining: an exclusive request (a FETCH, an admin request, ...) is held until every earlier response is written. */
    DRAIN_EXCLUSIVE("drain-exclusive"),
    /** Draining: a SASL re-authentication (KIP-368) is held until every earlier response is written and 100 ms passed. */
    DRAIN_REAUTHENTICATION("drain-reauthentication"),
    /** Draining because {@code kpipe.enable} was set to false: handed back to classic once every response is written. */
    DRAIN_DISABLED("drain-disabled"),
    /** The broker refused a request kpipe read ahead; closed once every earlier response is written. */
    CLOSE_AFTER_DRAIN("close-after-drain"),
    /**
     * Muted for none of the reasons above at the moment of the read: kpipe re-evaluates it at its next event (a
     * response written, a grant of the budget, the next processor round), e.g. after a per-connection limit was raised
     * at runtime.
     */
    MUTED("muted");

    private final String label;

    WaitReason(String label) {
        this.label = label;
    }

    /** @return the name in the connection dump, e.g. {@code awaiting-dispatch} */
    public String label() {
        return label;
    }
}
