// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * Why a connection kpipe owns is not reading its next request: the one vocabulary of kpipe's mute decisions
 * ({@code Rounds} mutes a connection while any reason holds, {@link #bit()}) and of the connection dump
 * ({@link #label()}, derived from the connection's state by {@link ConnectionSnapshot}); several can hold at once. Each reason but
 * {@link #MUTED} also has a counter of the waits started for it ({@link #metricName()}, {@code PipelineStats.waits}),
 * counted once when a connection starts waiting for it.
 */
public enum WaitReason {
    /**
     * Its last request is in the dispatch phase: queued in the broker's request channel, or a request handler has not
     * returned from {@code KafkaApis.handle} yet.
     */
    AWAITING_DISPATCH(
            "awaiting-dispatch",
            "a request was read and the connection waited for its dispatch (every pipelined request)"),
    /**
     * Its last request is a transactional produce or TXN_OFFSET_COMMIT whose {@code KafkaApis.handle} returned while
     * the broker verifies it with the transaction coordinator (KIP-890): the next request is read once its write, run
     * later (in a {@code CallbackRequest}, or by the coordinator runtime's verification callback), happened
     * ({@code deferred-dispatch-total}).
     */
    AWAITING_APPEND(
            "awaiting-append",
            "a transactional produce's or offset commit's handle returned and the connection waited for its write after"
                    + " verification"),
    /** It waits in line for the broker-wide in-flight byte budget ({@code kpipe.max.inflight.bytes}). */
    BUDGET("budget", "the connection waited in line for the in-flight byte budget"),
    /**
     * It is at a per-connection limit ({@code kpipe.max.inflight.requests.per.connection} or
     * {@code kpipe.max.inflight.bytes.per.connection}).
     */
    INFLIGHT_LIMIT("inflight-limit", "the connection reached a per-connection in-flight limit"),
    /**
     * Its client is not draining its responses: a response's write to the socket is incomplete while further responses
     * are held behind it. It is read no further until that write completes, as stock Kafka reads a connection one
     * request at a time (muted from a read to its response's completed send, {@code Processor.processCompletedSends}).
     */
    UNDRAINED(
            "undrained",
            "a response's write was incomplete while further responses were held behind it (the client did not read)"),
    /**
     * The storage side is saturated: the produce purgatory above {@code kpipe.max.delayed.produce.requests}, the request
     * queue 80% full ({@code queued.max.requests}), or {@code kpipe.storage.pressure.class}.
     */
    STORAGE_PRESSURE("storage-pressure", "the connection was kept muted because the storage side was saturated"),
    /** A client quota throttle window is open (KIP-219). */
    THROTTLED("throttled", "a client quota throttle window opened on a connection with none open"),
    /**
     * On probation: upgraded while its client (principal, client id) was marked throttled ({@code ThrottledClients}),
     * it reads its next request only once nothing of it is in flight, one at a time as stock Kafka, until a response
     * of that client is written with no throttle window open.
     */
    CLIENT_THROTTLED(
            "client-throttled",
            "a connection upgraded while its client was over its quota held its next read until its response was"
                    + " written"),
    /** Draining: an exclusive request (a FETCH, an admin request, ...) is held until every earlier response is written. */
    DRAIN_EXCLUSIVE("drain-exclusive", "an exclusive request was held until the earlier responses were written"),
    /** Draining: a SASL re-authentication (KIP-368) is held until every earlier response is written and 100 ms passed. */
    DRAIN_REAUTHENTICATION(
            "drain-reauthentication",
            "a SASL re-authentication was held until the earlier responses were written and 100 ms had passed"),
    /** Draining because {@code kpipe.enable} was set to false: handed back to classic once every response is written. */
    DRAIN_DISABLED("drain-disabled", "the connection drained because kpipe.enable was set to false"),
    /** The broker refused a request kpipe read ahead; closed once every earlier response is written. */
    CLOSE_AFTER_DRAIN(
            "close-after-drain",
            "the connection waited for its earlier responses before being closed (a refused request)"),
    /**
     * Muted for none of the reasons above at the moment of the read: kpipe re-evaluates it at its next event (a
     * response written, a grant of the budget, the next processor round), e.g. after a per-connection limit was raised
     * at runtime.
     */
    MUTED("muted");

    private final String label;
    /** What a wait for this reason means, for the description of {@link #metricName()}; {@code null} if none given. */
    private final String waitDescription;

    WaitReason(String label) {
        this(label, null);
    }

    WaitReason(String label, String waitDescription) {
        this.label = label;
        this.waitDescription = waitDescription;
    }

    /**
     * @return this reason as one bit of an {@code int} set, allocation-free ({@code ConnectionPipeline.muteReasons}):
     *     {@code 1 << ordinal()}
     */
    int bit() {
        return 1 << ordinal();
    }

    /** @return the name in the connection dump, e.g. {@code awaiting-dispatch} */
    public String label() {
        return label;
    }

    /**
     * @return true if waits for this reason are counted ({@link #metricName()}): every reason but {@link #MUTED},
     *     which is the absence of one (a connection is left muted with no reason only until its next evaluation)
     */
    public boolean counted() {
        return this != MUTED;
    }

    /**
     * @return the name of the counter of waits started for this reason, in the metric group {@code kpipe-metrics}:
     *     {@code wait-} + {@link #label()} + {@code -total}, e.g. {@code wait-budget-total}; one per {@link #counted()}
     *     reason, so that a reason added here gets its metric
     */
    public String metricName() {
        return "wait-" + label + "-total";
    }

    /** @return the description of {@link #metricName()}'s metric */
    public String metricDescription() {
        return "Waits of pipelined connections for " + label + ", counted once when one starts: "
                + (waitDescription != null ? waitDescription : "see the connection dump") + ".";
    }
}
