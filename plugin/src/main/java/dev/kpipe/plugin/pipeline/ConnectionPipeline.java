// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Reservation;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.quotas.ThrottleWindows;
import dev.kpipe.spi.Reauthentication;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection that kpipe owns, and the only writer of its state, as Kafka's {@code KafkaChannel} owns its mute
 * state: its {@link ConnectionState} (changed by {@link #transition} only), its requests in flight
 * ({@link InflightRequests}), whether kpipe keeps Kafka's channel muted ({@link #mute()} and {@link #unmute()} change
 * that flag and the selector's interest together), and the sub-conditions that hold beside the state: a request in
 * the dispatch phase, throttle windows, the byte-budget reservation or wait, storage-side saturation. Counts that the
 * broker-wide gauges mirror move with the connection's own ({@code held-requests} with {@link #hold}, the drain and
 * downgrade counters with {@link #transition}). A connection Kafka owns (classic) has no such object.
 *
 * <p>Thread: the connection's network thread, except its {@link DispatchPhase}, which a handler thread may end
 * (compare-and-set), and the getters the connection dump ({@link ConnectionSnapshot}, a JMX thread) reads:
 * {@link #state()}, {@link #context()} and the dispatch phase are volatile, the counts are
 * published by {@link InflightRequests}, and the few plain boolean and int fields it reads are atomic to read (JLS
 * 17.7): a moment stale at worst, never torn.
 */
final class ConnectionPipeline<Q, S> extends Signals.Node<ConnectionPipeline<Q, S>> implements Reservation.Holder {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionPipeline.class);
    /** Illegal moves: WARN once, then DEBUG (see {@link FaultLog}). */
    private static final FaultLog ILLEGAL_MOVE = new FaultLog(LOG);

    private final String id;
    private final ProcessorPipelines<Q, S> processor;
    private final PipelineStats stats;
    private final Ticker ticker;
    /** When kpipe took the connection over (the coordinator's clock, ns). */
    private final long upgradedNanos;
    /** The requests read and not yet answered, in arrival order. */
    private final InflightRequests<Q, S> inflight;
    /** Open throttle windows (KIP-219). */
    private final ThrottleWindows throttle = new ThrottleWindows();
    /** The reservation of the byte budget for the next read, granted or awaited. */
    private final Reservation reservation;
    /** The request whose order-defining step has not happened yet, if any. */
    private final DispatchPhase dispatch = new DispatchPhase();

    /** Changed by {@link #transition} only; volatile for the connection dump. */
    private volatile ConnectionState state = ConnectionState.PIPELINED;
    /**
     * The context of the first request read on the connection while kpipe owned it (listener, principal, client id
     * and software), or {@code null} until then; for the connection dump.
     */
    private volatile RequestContext context;
    /**
     * The exclusive request held for the drain ({@code DRAINING_EXCLUSIVE}, and {@code CLOSING_AFTER_DRAIN} if one was
     * held when the close was decided), or {@code null}. Counted in {@code held-requests} while set.
     */
    private Q heldRequest;
    /**
     * The SASL re-authentication held for the drain ({@code DRAINING_REAUTHENTICATION}), or {@code null}. Counted in
     * {@code held-requests} while set.
     */
    private Reauthentication heldReauthentication;
    /** What kpipe last made of the selector's mute state: reading a request mutes. */
    private boolean muted = true;
    /** Listed in its processor's {@link ProcessorPipelines#pending} for evaluation. */
    private boolean scheduled;
    /** When the connection last finished writing a response (the coordinator's clock), or 0. */
    private long lastWrittenNanos;
    /** A wake-up is scheduled for the end of the quiet period of the held re-authentication. */
    private boolean quietWakeupScheduled;
    /** When the current drain started (the coordinator's clock). */
    private long drainStartNanos;
    /** The largest request read so far, bytes: the estimate reserved for the next one. */
    private int largestRequest;
    /** Kept muted only because the storage side is saturated; listed in {@link ProcessorPipelines#pressureBlocked}. */
    private boolean pressureBlocked;
    /** At a per-connection limit as of its last evaluation: a wait for the limit is counted when this becomes true. */
    private boolean atLimit;
    /**
     * The topics of its last produce (names, or ids: {@code RequestClassifier.topicsOf}), kept while a storage plugin
     * checks topics; {@code null} otherwise.
     */
    private Object[] produceTopics;

    /**
     * @param id Kafka's connection id
     * @param processor its processor's state
     * @param stats the broker-wide counts its own move with
     * @param ticker the coordinator's clock
     * @param largestRequest the size of the largest request seen on it so far, bytes (0 for none)
     */
    ConnectionPipeline(
            String id, ProcessorPipelines<Q, S> processor, PipelineStats stats, Ticker ticker, int largestRequest) {
        this.id = id;
        this.processor = processor;
        this.stats = stats;
        this.ticker = ticker;
        this.upgradedNanos = ticker.nanos();
        this.largestRequest = largestRequest;
        this.inflight = new InflightRequests<>(stats);
        this.reservation = new Reservation(this, processor.holders);
    }

    /** @return Kafka's connection id; thread: any */
    String id() {
        return id;
    }

    /** @return its processor's kpipe state; thread: any */
    ProcessorPipelines<Q, S> processor() {
        return processor;
    }

    /** @return the connection's state; thread: any (volatile) */
    ConnectionState state() {
        return state;
    }

    /** @return the context of the first request kpipe read on it, or {@code null}; thread: any (volatile) */
    RequestContext context() {
        return context;
    }

    /** @return when kpipe took it over (the coordinator's clock, ns); thread: any */
    long upgradedNanos() {
        return upgradedNanos;
    }

    /** @return its requests in flight */
    InflightRequests<Q, S> inflight() {
        return inflight;
    }

    /** @return its dispatch phase; thread: any */
    DispatchPhase dispatch() {
        return dispatch;
    }

    /** @return its reservation of the byte budget */
    Reservation reservation() {
        return reservation;
    }

    /**
     * Moves the connection to its next state, the one place its state changes (Kafka's
     * {@code KafkaChannel.handleChannelMuteEvent} is the model). Network thread. The legal moves:
     *
     * <table>
     *   <caption>Legal moves</caption>
     *   <tr><th>from</th><th>event</th><th>to</th></tr>
     *   <tr><td>PIPELINED (no request in the dispatch phase)</td><td>REQUEST_READ</td><td>PIPELINED</td></tr>
     *   <tr><td>PIPELINED (no request in the dispatch phase)</td><td>EXCLUSIVE_HELD</td><td>DRAINING_EXCLUSIVE</td></tr>
     *   <tr><td>PIPELINED, DRAINING_DISABLED</td><td>REAUTHENTICATION_HELD</td><td>DRAINING_REAUTHENTICATION</td></tr>
     *   <tr><td>PIPELINED</td><td>DISABLED</td><td>DRAINING_DISABLED</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*, CLOSING_AFTER_DRAIN</td><td>REQUEST_REJECTED</td>
     *       <td>CLOSING_AFTER_DRAIN</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*, CLOSING_AFTER_DRAIN</td><td>INPUT_ENDED</td>
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
     * <p>The counts that go with a move: entering a draining state from PIPELINED starts a drain ({@code drain-total},
     * its start time); handing a draining connection back ends it ({@code drain-time-ms-total}); every hand-back is a
     * downgrade ({@code downgrade-total}); a held re-authentication counts in {@code reauthentication-drain-total};
     * entering a state with a wait reason starts a wait ({@code wait-<reason>-total}).
     *
     * @param event what happened
     * @return true if the move was legal; false if it was illegal (counted; the caller mutes the connection and
     *     schedules its evaluation)
     */
    boolean transition(ConnectionEvent event) {
        ConnectionState from = state;
        ConnectionState to = from.next(event);
        if (dispatch.active() && (event == ConnectionEvent.REQUEST_READ || event == ConnectionEvent.EXCLUSIVE_HELD)) {
            to = null; // a read while the previous request is in the dispatch phase: the connection was muted
        }
        boolean legal = to != null;
        if (!legal) {
            stats.pluginFaults.increment();
            ILLEGAL_MOVE.fault("kpipe: illegal move {} in state {} of {}", event, from, this);
            to = from.owned() ? ConnectionState.CLOSING_AFTER_DRAIN : from;
        }
        if (from == ConnectionState.DRAINING_REAUTHENTICATION && to == ConnectionState.CLOSING_AFTER_DRAIN) {
            takeHeldReauthentication();
        }
        state = to;
        if (to == from) {
            return legal;
        }
        if (to.draining() && from == ConnectionState.PIPELINED) {
            drainStartNanos = ticker.nanos();
            stats.drains.increment();
        }
        if (to == ConnectionState.HANDED_BACK) {
            if (from.draining()) {
                stats.drainTimeNanos.add(ticker.nanos() - drainStartNanos);
            }
            stats.downgrades.increment();
        }
        if (to == ConnectionState.DRAINING_REAUTHENTICATION) {
            stats.reauthenticationDrains.increment();
        }
        WaitReason waits = to.waitReason();
        if (waits != null) {
            stats.waitStarted(waits);
        }
        return legal;
    }

    /** @return true if {@link ConnectionInvariants#violation} finds nothing; network thread (or a test) */
    boolean invariantsHold() {
        return invariantViolation() == null;
    }

    /** @return the first violated invariant ({@link ConnectionInvariants#violation}), or {@code null}; network thread */
    String invariantViolation() {
        return ConnectionInvariants.violation(this);
    }

    // ---------------------------------------------------------------- reading and the dispatch phase

    /**
     * A pipelined request was read (after {@link ConnectionEvent#REQUEST_READ} was legal): it is in flight and in the
     * dispatch phase, and Kafka's read muted the channel. Network thread.
     *
     * @param request the broker's request handle
     * @param ctx its context (kept for the dump if none is yet)
     * @param size its size, bytes, already charged on the budget (the permit its slot holds)
     * @param api its row of the table of pipelined APIs
     */
    void requestRead(Q request, RequestContext ctx, int size, PipelinedApi api) {
        if (size > largestRequest) {
            largestRequest = size;
        }
        if (context == null) {
            context = ctx;
        }
        inflight.add(request, size, ticker.nanos(), api);
        dispatch.start(request);
        stats.waitStarted(WaitReason.AWAITING_DISPATCH);
        muted = true;
    }

    // ---------------------------------------------------------------- responses

    /**
     * The broker finished with a response of this connection: if it was the outstanding send, the request leaves and
     * the connection's last write time is now. Network thread.
     *
     * @param response the broker's response handle
     * @param budget where the request's permit goes back
     * @return true if it was this connection's outstanding send
     */
    boolean responseWritten(S response, ByteBudget budget) {
        if (!inflight.written(response, budget)) {
            return false;
        }
        lastWrittenNanos = ticker.nanos();
        return true;
    }

    /** @return when the connection last finished writing a response (the coordinator's clock), or 0 */
    long lastWrittenNanos() {
        return lastWrittenNanos;
    }

    /**
     * @return true the first time a quiet-period wake-up is asked for the held re-authentication (the caller schedules
     *     it); false after
     */
    boolean firstQuietWakeup() {
        if (quietWakeupScheduled) {
            return false;
        }
        quietWakeupScheduled = true;
        return true;
    }

    // ---------------------------------------------------------------- held request

    /**
     * Holds an exclusive request for the drain; counted in {@code held-requests}. Network thread.
     *
     * @param request the broker's request
     */
    void hold(Q request) {
        heldRequest = request;
        stats.heldRequests.incrementAndGet();
    }

    /**
     * Holds a SASL re-authentication for the drain; counted in {@code held-requests}. Network thread.
     *
     * @param reauthentication the broker's pending re-authentication
     */
    void holdReauthentication(Reauthentication reauthentication) {
        heldReauthentication = reauthentication;
        stats.heldRequests.incrementAndGet();
    }

    /** @return the held request, no longer held (and no longer counted); {@code null} if none. Network thread. */
    Q takeHeldRequest() {
        Q h = heldRequest;
        if (h != null) {
            heldRequest = null;
            stats.heldRequests.decrementAndGet();
        }
        return h;
    }

    /**
     * @return the held re-authentication, no longer held (and no longer counted); {@code null} if none. Network
     *     thread.
     */
    Reauthentication takeHeldReauthentication() {
        Reauthentication h = heldReauthentication;
        if (h != null) {
            heldReauthentication = null;
            stats.heldRequests.decrementAndGet();
        }
        return h;
    }

    /** @return the held request or re-authentication, or {@code null} */
    Object held() {
        return heldRequest != null ? heldRequest : heldReauthentication;
    }

    // ---------------------------------------------------------------- muting

    /** Kafka muted the channel as it read a request ({@code Processor} mutes after every read). Network thread. */
    void mutedByRead() {
        muted = true;
    }

    /** Mutes Kafka's channel, if kpipe has not: the selector reads nothing more from it. Network thread. */
    void mute() {
        if (!muted) {
            processor.processor.mute(id);
            muted = true;
        }
    }

    /** Unmutes Kafka's channel, if kpipe keeps it muted: the selector reads its next request. Network thread. */
    void unmute() {
        if (muted) {
            processor.processor.unmute(id);
            muted = false;
        }
    }

    /** @return true while kpipe keeps Kafka's channel muted; thread: any (a moment stale from another) */
    boolean muted() {
        return muted;
    }

    /**
     * Mutes the connection and evaluates it at the next safe point: after a move to CLOSING_AFTER_DRAIN, it is closed
     * once every earlier response is written. Network thread.
     */
    void muteAndSchedule() {
        if (!state.owned()) {
            return;
        }
        mute();
        schedule();
    }

    /** Queues the connection for evaluation at its processor's next safe point (once). Network thread. */
    void schedule() {
        if (!scheduled) {
            scheduled = true;
            processor.pending.add(this);
        }
    }

    /** @return true while listed in its processor's pending list for evaluation */
    boolean scheduled() {
        return scheduled;
    }

    /** It was taken from its processor's pending list for evaluation: it may be queued again. Network thread. */
    void evaluating() {
        scheduled = false;
    }

    /**
     * The reasons this connection must stay muted now, as {@link WaitReason} bits: in the dispatch phase (or waiting
     * for a deferred append), throttled, at a per-connection limit. Counts a wait for the per-connection limit
     * ({@code wait-inflight-limit-total}) when the limit starts to hold. Network thread, at an evaluation.
     *
     * @param limits the per-connection in-flight limits
     * @return the reasons ({@link WaitReason#bit()}s), 0 if none
     */
    int muteReasons(InflightLimits limits) {
        boolean limited = !limits.admitsAnother(inflight.size(), inflight.bytes());
        if (limited && !atLimit) {
            stats.waitStarted(WaitReason.INFLIGHT_LIMIT);
        }
        atLimit = limited;
        int r = 0;
        if (dispatch.active()) {
            r |= (dispatch.deferred() ? WaitReason.AWAITING_APPEND : WaitReason.AWAITING_DISPATCH).bit();
        }
        if (throttle.throttled()) {
            r |= WaitReason.THROTTLED.bit();
        }
        if (limited) {
            r |= WaitReason.INFLIGHT_LIMIT.bit();
        }
        return r;
    }

    // ---------------------------------------------------------------- throttle windows (KIP-219)

    /** @return its open throttle windows; their count is read by the dump from a JMX thread (a moment stale) */
    ThrottleWindows throttle() {
        return throttle;
    }

    // ---------------------------------------------------------------- storage pressure

    /**
     * Keeps the connection muted because the storage side is saturated: it is listed in its processor's
     * {@link ProcessorPipelines#pressureBlocked} until released, and a wait is counted when it starts. Network thread.
     *
     * @return true if it started waiting now
     */
    boolean blockForPressure() {
        if (pressureBlocked) {
            return false;
        }
        pressureBlocked = true;
        processor.pressureBlocked.add(this);
        stats.waitStarted(WaitReason.STORAGE_PRESSURE);
        return true;
    }

    /** Storage pressure no longer holds it (its processor prunes its list at the round's end). Network thread. */
    void releasePressure() {
        if (pressureBlocked) {
            pressureBlocked = false;
            processor.pressureReleased = true;
        }
    }

    /**
     * @param topics the topics of the produce request just read (kept while a storage plugin checks topics), or
     *     {@code null}
     */
    void producedTo(Object[] topics) {
        produceTopics = topics;
    }

    /** @return the topics of its last produce, if kept, else {@code null} */
    Object[] produceTopics() {
        return produceTopics;
    }

    /** @return true while kept muted by storage-side saturation; thread: any (a moment stale from another) */
    boolean pressureBlocked() {
        return pressureBlocked;
    }

    /** @return the largest request read so far, bytes: what its next read reserves */
    int largestRequest() {
        return largestRequest;
    }

    // ---------------------------------------------------------------- Reservation.Holder

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
        mute();
        schedule();
    }

    @Override
    public String toString() {
        return "connection " + id + " " + state + " " + inflight + " throttles=" + throttle.open()
                + " awaitingDispatch=" + dispatch.active() + " held=" + (held() != null) + " muted=" + muted
                + " " + reservation;
    }
}
