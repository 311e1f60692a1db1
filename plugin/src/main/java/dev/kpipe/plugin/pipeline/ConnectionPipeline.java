package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Reservation;
import dev.kpipe.quotas.MuteReason;
import dev.kpipe.quotas.MuteReasons;
import dev.kpipe.quotas.ThrottleWindows;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection that kpipe owns: its {@link ConnectionState} (changed by {@link #transition} only), its requests in
 * flight, and the sub-conditions that hold beside the state (a request in the dispatch phase, throttle windows, the
 * byte-budget reservation or wait, storage-side saturation). A connection Kafka owns (classic) has no such object.
 *
 * <p>Owned by the connection's network thread, except {@link #awaitingDispatch}, which a handler
 * thread may clear (by compare-and-set, as the network thread does). The connection dump ({@link ConnectionSnapshot}, a JMX thread) reads {@link #state}, {@link #context}
 * and the {@code published*} fields, which are volatile or written with opaque stores (no fence, no allocation; see
 * {@link #publish()}), and a few plain boolean, int and reference fields, which the JLS (17.7) makes atomic: a moment
 * stale at worst, never torn.
 */
final class ConnectionPipeline implements Reservation.Holder {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionPipeline.class);
    /** Illegal moves: WARN once, then DEBUG (see {@link FaultLog}). */
    private static final FaultLog ILLEGAL_MOVE = new FaultLog(LOG);

    final String id;
    final ProcessorPipelines processor;
    /** Where the counts of illegal moves go ({@code plugin-fault-total}, {@code held-requests}). */
    private final PipelineStats stats;
    /**
     * The connection's state; changed by {@link #transition} only. Volatile for the connection dump; written on the
     * network thread.
     */
    private volatile ConnectionState state = ConnectionState.PIPELINED;
    /**
     * The context of the request that upgraded the connection (listener, principal, client id and software), or of the
     * first request read after a deferred upgrade; {@code null} until then. Read by the connection dump only.
     */
    volatile RequestContext context;
    /** When kpipe took the connection over (the coordinator's clock, ns). */
    final long upgradedNanos;
    /** Responses of this connection held for ordering now (its share of {@code held-responses}). */
    int heldResponses;
    /** {@link #slots}' size as of the last {@link #publish()}; opaque access. */
    private int publishedInflight;
    /** {@link #inflightBytes} as of the last {@link #publish()}; opaque access. */
    private long publishedInflightBytes;
    /** The oldest slot's {@link Slot#readNanos}, 0 for none, as of the last {@link #publish()}; opaque access. */
    private long publishedOldestReadNanos;
    /** {@link #heldResponses} as of the last {@link #publish()}; opaque access. */
    private int publishedHeldResponses;
    /** Requests read and not yet answered, in arrival order. */
    final ArrayDeque<Slot> slots = new ArrayDeque<>();
    /** Slots whose response was written, kept for the next requests (at most the connection's peak in flight). */
    private final ArrayDeque<Slot> freeSlots = new ArrayDeque<>();
    /** Sum of the slots' bytes. */
    long inflightBytes;
    /** The head slot's response was handed to the broker and has not completed. */
    boolean sendOutstanding;
    /**
     * The request in the dispatch phase, or {@code null}: set by the network thread when it reads the request, cleared
     * once by {@link #endDispatch} (a handler thread's dispatch signal; or the network thread when it dequeues the
     * request's response first, or, for a deferred append, when that response is written).
     */
    volatile Object awaitingDispatch;
    /**
     * The request in the dispatch phase whose {@code KafkaApis.handle} returned before its append (KIP-890
     * verification: {@code onDispatchDeferred}); set by a handler thread, cleared by {@link #endDispatch}. Meaningful
     * only while it is {@link #awaitingDispatch} (a stale reference is harmless).
     */
    volatile Object awaitingAppend;

    final ThrottleWindows throttle = new ThrottleWindows();
    /**
     * What the connection holds for its drain: the exclusive request ({@link ConnectionState#DRAINING_EXCLUSIVE}, and
     * {@link ConnectionState#CLOSING_AFTER_DRAIN} if one was held when the close was decided), or the SASL
     * re-authentication, the broker's opaque handle ({@link ConnectionState#DRAINING_REAUTHENTICATION}); {@code null}
     * in every other state (see {@link #invariantViolation()}).
     */
    Object held;
    /** When the connection last finished writing a response (the coordinator's clock), or 0. */
    long lastWrittenNanos;
    /** A wake-up is scheduled for the end of the quiet period of the held re-authentication. */
    boolean quietWakeupScheduled;

    long drainStartNanos;
    /** What kpipe last made of the selector's mute state: reading a request mutes. */
    boolean muted = true;
    /**
     * 1 while listed in its processor's {@link ProcessorPipelines#dispatched} ({@link Signals}), else 0; compare-and-set
     * by any thread through {@code Signals}' VarHandle.
     */
    int signalled;
    /** The next connection in {@link ProcessorPipelines#dispatched} ({@link Signals}); {@code null} when not listed. */
    ConnectionPipeline signalNext;
    /** Queued for evaluation in {@link ProcessorPipelines#pending}. */
    boolean scheduled;
    /**
     * The reservation of the global budget for the next request read, granted or awaited; listed in
     * {@link ProcessorPipelines#holders} while granted.
     */
    final Reservation reservation;
    /** The largest request read so far, in bytes: the estimate reserved for the next one. */
    int largestRequest;
    /** Kept muted only because the storage side is saturated; re-evaluated every round. */
    boolean pressureBlocked;
    /**
     * At a per-connection limit as of its last evaluation ({@link WaitReason#INFLIGHT_LIMIT}): a wait for the limit is
     * counted when this becomes true.
     */
    boolean atLimit;
    /**
     * @param id Kafka's connection id
     * @param processor its processor's state
     * @param stats where illegal moves are counted
     * @param nowNanos when kpipe takes it over (the coordinator's clock)
     */
    ConnectionPipeline(String id, ProcessorPipelines processor, PipelineStats stats, long nowNanos) {
        this.upgradedNanos = nowNanos;
        this.id = id;
        this.processor = processor;
        this.stats = stats;
        this.reservation = new Reservation(this, processor.holders);
    }

    /** @return the connection's state; thread: any (volatile) */
    ConnectionState state() {
        return state;
    }

    /**
     * Moves the connection to its next state, the one place its state changes (Kafka's
     * {@code KafkaChannel.handleChannelMuteEvent} is the model). Network thread. The legal moves:
     *
     * <table>
     *   <caption>Legal moves</caption>
     *   <tr><th>from</th><th>event</th><th>to</th></tr>
     *   <tr><td>PIPELINED</td><td>EXCLUSIVE_HELD</td><td>DRAINING_EXCLUSIVE</td></tr>
     *   <tr><td>PIPELINED, DRAINING_DISABLED</td><td>REAUTHENTICATION_HELD</td><td>DRAINING_REAUTHENTICATION</td></tr>
     *   <tr><td>PIPELINED</td><td>DISABLED</td><td>DRAINING_DISABLED</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*, CLOSING_AFTER_DRAIN</td><td>REQUEST_REJECTED</td>
     *       <td>CLOSING_AFTER_DRAIN</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*</td><td>HAND_BACK</td><td>HANDED_BACK</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*, CLOSING_AFTER_DRAIN</td><td>CLOSE</td><td>CLOSED</td></tr>
     * </table>
     *
     * Every other move is illegal: a kpipe bug or a broker event kpipe did not expect (a request read, or a
     * re-authentication reported, on a connection kpipe keeps muted). It is counted in {@code plugin-fault-total},
     * logged (WARN once, then DEBUG) and takes the safe outcome: a connection kpipe still owns goes to
     * {@link ConnectionState#CLOSING_AFTER_DRAIN} (its earlier responses are written in order, then it is closed and
     * the client reconnects), a terminal one stays where it is. Entering {@code CLOSING_AFTER_DRAIN} from
     * {@code DRAINING_REAUTHENTICATION} drops the held re-authentication (it could only begin after the close).
     *
     * @param event what happened
     * @return true if the move was legal; false if it was illegal (counted; the caller mutes the connection and
     *     schedules its evaluation, see {@code PipelineCoordinator})
     */
    boolean transition(ConnectionEvent event) {
        ConnectionState from = state;
        ConnectionState to = from.next(event);
        boolean legal = to != null;
        if (!legal) {
            stats.pluginFaults.increment();
            ILLEGAL_MOVE.fault("kpipe: illegal move {} in state {} of {}", event, from, this);
            to = from.owned() ? ConnectionState.CLOSING_AFTER_DRAIN : from;
        }
        if (from == ConnectionState.DRAINING_REAUTHENTICATION && to == ConnectionState.CLOSING_AFTER_DRAIN) {
            held = null;
            stats.heldRequests.decrementAndGet();
        }
        state = to;
        WaitReason waits = to.waitReason();
        if (waits != null && to != from) {
            stats.waitStarted(waits);
        }
        return legal;
    }

    /** @return true if {@link ConnectionInvariants#violation} finds nothing; network thread (or a test) */
    boolean invariantsHold() {
        return invariantViolation() == null;
    }

    /** @return {@link ConnectionInvariants#violation}: the first violated invariant, or {@code null}; network thread */
    String invariantViolation() {
        return ConnectionInvariants.violation(this);
    }

    /**
     * Ends {@code request}'s dispatch phase if it is still the one in it: compare-and-set, so that of a handler's
     * dispatch signal and the network thread's dequeue of the response (or written-response fallback) exactly one
     * wins, and neither clears a later request's phase. Thread: any.
     *
     * @param request the broker's request handle
     * @return true if this call ended it
     */
    boolean endDispatch(Object request) {
        if (!AWAITING_DISPATCH.compareAndSet(this, request, null)) {
            return false;
        }
        AWAITING_APPEND.compareAndSet(this, request, null);
        return true;
    }

    private static final VarHandle AWAITING_DISPATCH;
    private static final VarHandle AWAITING_APPEND;
    private static final VarHandle INFLIGHT;
    private static final VarHandle INFLIGHT_BYTES;
    private static final VarHandle OLDEST_READ_NANOS;
    private static final VarHandle HELD_RESPONSES;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            AWAITING_DISPATCH = l.findVarHandle(ConnectionPipeline.class, "awaitingDispatch", Object.class);
            AWAITING_APPEND = l.findVarHandle(ConnectionPipeline.class, "awaitingAppend", Object.class);
            INFLIGHT = l.findVarHandle(ConnectionPipeline.class, "publishedInflight", int.class);
            INFLIGHT_BYTES = l.findVarHandle(ConnectionPipeline.class, "publishedInflightBytes", long.class);
            OLDEST_READ_NANOS = l.findVarHandle(ConnectionPipeline.class, "publishedOldestReadNanos", long.class);
            HELD_RESPONSES = l.findVarHandle(ConnectionPipeline.class, "publishedHeldResponses", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Publishes the in-flight counts, the oldest request's read time and the held responses for the connection dump.
     * Network thread, after each change of {@link #slots} or {@link #heldResponses}: four opaque stores (plain stores
     * on x86 and ARM, atomic even for the longs), no fence, no allocation.
     */
    void publish() {
        Slot head = slots.peekFirst();
        INFLIGHT.setOpaque(this, slots.size());
        INFLIGHT_BYTES.setOpaque(this, inflightBytes);
        OLDEST_READ_NANOS.setOpaque(this, head == null ? 0L : head.readNanos);
        HELD_RESPONSES.setOpaque(this, heldResponses);
    }

    /** @return requests in flight as last published; thread: any */
    int publishedInflight() {
        return (int) INFLIGHT.getOpaque(this);
    }

    /** @return bytes in flight as last published; thread: any */
    long publishedInflightBytes() {
        return (long) INFLIGHT_BYTES.getOpaque(this);
    }

    /** @return the oldest in-flight request's read time (the coordinator's clock), 0 for none; thread: any */
    long publishedOldestReadNanos() {
        return (long) OLDEST_READ_NANOS.getOpaque(this);
    }

    /** @return responses held for ordering as last published; thread: any */
    int publishedHeldResponses() {
        return (int) HELD_RESPONSES.getOpaque(this);
    }

    /**
     * The reasons this connection must stay muted now. Counts a wait for the per-connection limit
     * ({@code wait-inflight-limit-total}) when the limit starts to hold. Network thread, at an evaluation.
     *
     * @param limits the per-connection in-flight limits
     * @return the reasons ({@link MuteReasons} bits)
     */
    int muteReasons(InflightLimits limits) {
        boolean limited = !limits.admitsAnother(slots.size(), inflightBytes);
        if (limited && !atLimit) {
            stats.waitStarted(WaitReason.INFLIGHT_LIMIT);
        }
        atLimit = limited;
        int r = MuteReasons.NONE;
        r = MuteReasons.withIf(r, MuteReason.AWAITING_DISPATCH, awaitingDispatch != null);
        r = MuteReasons.withIf(r, MuteReason.DRAINING, state.draining());
        r = MuteReasons.withIf(r, MuteReason.THROTTLED, throttle.throttled());
        r = MuteReasons.withIf(r, MuteReason.BACK_PRESSURE, limited);
        return r;
    }

    /** Thread: any. The budget granted the reservation: evaluate this connection on its own thread. */
    @Override
    public void admitted() {
        reservation.granted();
        processor.dispatched.add(this);
        processor.processor.wakeup();
    }

    /** @return true while kpipe owns the connection ({@link ConnectionState#owned()}) */
    @Override
    public boolean owned() {
        return state.owned();
    }

    /** @return true if it reads now: PIPELINED and unmuted */
    @Override
    public boolean reading() {
        return !muted && state == ConnectionState.PIPELINED;
    }

    /** Its idle reservation is revoked: muted, and evaluated again at the next safe point. Network thread. */
    @Override
    public void revoke() {
        processor.processor.mute(id);
        muted = true;
        schedule();
    }

    /**
     * @param request a request just read
     * @param bytes its size, bytes (its budget permit)
     * @param readNanos when it was read
     * @return a slot for it: a free one of this connection if there is one, else a new one. Network thread.
     */
    Slot newSlot(Object request, int bytes, long readNanos) {
        Slot s = freeSlots.pollFirst();
        return (s == null ? new Slot() : s).fill(request, bytes, readNanos);
    }

    /**
     * Keeps a slot that left {@link #slots} (its response written, its permit given back) for a later request.
     * Network thread.
     *
     * @param s the slot; nothing may refer to it any more
     */
    void recycle(Slot s) {
        s.request = null;
        s.response = null;
        freeSlots.addFirst(s);
    }

    /**
     * Mutes the connection and evaluates it at the next safe point: after a move to CLOSING_AFTER_DRAIN, it is closed
     * once every earlier response is written ({@code PipelineCoordinator.evaluate}). Network thread.
     */
    void muteAndSchedule() {
        if (!state.owned()) {
            return;
        }
        if (!muted) {
            processor.processor.mute(id);
            muted = true;
        }
        schedule();
    }

    /** Queues the connection for evaluation at its processor's next safe point (once). Network thread. */
    void schedule() {
        if (!scheduled) {
            scheduled = true;
            processor.pending.add(this);
        }
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
        return "connection " + id + " " + state + " inflight=" + slots.size() + " bytes=" + inflightBytes
                + " sendOutstanding=" + sendOutstanding + " throttles=" + throttle.open()
                + " awaitingDispatch=" + (awaitingDispatch != null) + " held=" + (held != null) + " muted=" + muted
                + " " + reservation;
    }
}
