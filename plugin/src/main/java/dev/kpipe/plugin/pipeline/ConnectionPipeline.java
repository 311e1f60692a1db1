package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.quotas.MuteReason;
import dev.kpipe.quotas.MuteReasons;
import dev.kpipe.quotas.ThrottleWindows;
import java.util.ArrayDeque;

/**
 * The state of one connection that kpipe owns (pipelined, or draining back to classic). A connection
 * Kafka owns (classic) has no such object.
 *
 * <p>Owned by the connection's network thread, except {@link #awaitingDispatch}, which a handler
 * thread clears.
 */
final class ConnectionPipeline {

    /** Modes of a connection kpipe owns. */
    enum Mode {
        /** Requests are read as soon as the previous one is dispatched. */
        PIPELINED,
        /** An exclusive request is held until every earlier response is written. */
        DRAINING
    }

    final String id;
    final ProcessorPipelines processor;
    Mode mode = Mode.PIPELINED;
    /** Requests read and not yet answered, in arrival order. */
    final ArrayDeque<Slot> slots = new ArrayDeque<>();
    /** Sum of the slots' bytes. */
    long inflightBytes;
    /** The head slot's response was handed to the broker and has not completed. */
    boolean sendOutstanding;
    /** The request in the dispatch phase, or {@code null}; cleared by the handler thread. */
    volatile Object awaitingDispatch;
    final ThrottleWindows throttle = new ThrottleWindows();
    /** The exclusive request held for a drain, or {@code null}. */
    Object held;
    long drainStartNanos;
    /** What kpipe last made of the selector's mute state: reading a request mutes. */
    boolean muted = true;
    boolean closed;
    /** Queued for evaluation in {@link ProcessorPipelines#pending}. */
    boolean scheduled;

    ConnectionPipeline(String id, ProcessorPipelines processor) {
        this.id = id;
        this.processor = processor;
    }

    /**
     * @param limits the per-connection in-flight limits
     * @return the reasons this connection must stay muted now ({@link MuteReasons} bits)
     */
    int muteReasons(InflightLimits limits) {
        int r = MuteReasons.NONE;
        r = MuteReasons.withIf(r, MuteReason.AWAITING_DISPATCH, awaitingDispatch != null);
        r = MuteReasons.withIf(r, MuteReason.DRAINING, mode == Mode.DRAINING);
        r = MuteReasons.withIf(r, MuteReason.THROTTLED, throttle.throttled());
        r = MuteReasons.withIf(r, MuteReason.BACK_PRESSURE, !limits.admitsAnother(slots.size(), inflightBytes));
        return r;
    }

    /** @return the slot of the request, or {@code null} (scans from the oldest; the list is short) */
    Slot slotOf(Object request) {
        for (Slot s : slots) {
            if (s.request == request) {
                return s;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "connection " + id + " " + mode + " inflight=" + slots.size() + " bytes=" + inflightBytes
            + " sendOutstanding=" + sendOutstanding + " throttles=" + throttle.open()
            + " awaitingDispatch=" + (awaitingDispatch != null) + " held=" + (held != null) + " muted=" + muted;
    }
}
