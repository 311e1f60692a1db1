// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Reservation;
import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.quotas.ThrottleWindows;
import dev.kpipe.spi.Reauthentication;
import org.apache.kafka.common.requests.RequestContext;

/**
 * One connection that kpipe owns, and the only writer of its state, as Kafka's {@code KafkaChannel} owns its mute
 * state: its state ({@link ConnectionStateMachine}, moved by {@link #transition} only) and its parts, which no other
 * class sees: requests in flight ({@link InflightRequests}, read through the read-only {@link #inflight()}), the
 * dispatch phase ({@link DispatchPhase}), throttle windows ({@link ThrottleWindows}), the byte-budget
 * {@link Reservation}, Kafka's channel as kpipe keeps it (its superclass {@link ConnectionChannel}), what a drain holds
 * ({@link DrainHold}), the storage-side wait ({@link PressureWait}), its client's probation ({@link ClientProbation}).
 * Callers say what happened ({@link #dispatchEnded}, ...); it moves its fields and tells its processor.
 *
 * <p>Thread: the network thread, except {@link #dispatchEnded}, {@link #dispatchDeferred} (a handler: compare-and-set)
 * and {@link #admitted} (any), and the queries the dump reads ({@link ConnectionSnapshot}, a JMX thread): volatile,
 * opaque ({@link InflightRequests}) or plain fields atomic to read (JLS 17.7): a moment stale, never torn.
 */
final class ConnectionPipeline<Q, S> extends ConnectionChannel<Q, S, ConnectionPipeline<Q, S>>
        implements Reservation.Holder {

    private final ProcessorQueues<Q, S, ConnectionPipeline<Q, S>> queues;
    private final PipelineStats stats;
    private final Ticker ticker;
    /** When kpipe took the connection over (the coordinator's clock, ns). */
    private final long upgradedNanos;

    private final InflightRequests<Q, S> inflight;
    private final ThrottleWindows throttle = new ThrottleWindows();
    private final Reservation reservation;
    private final DispatchPhase dispatch = new DispatchPhase();
    private final DrainHold<Q> hold;
    private final PressureWait pressure;
    private final ConnectionStateMachine machine;
    /** Who it belongs to, from the first request kpipe read on it, or {@code null}; the dump's and the quota's. */
    private volatile ConnectionIdentity identity;
    /** When the connection last finished writing a response (the coordinator's clock), or 0. */
    private long lastWrittenNanos;
    /** The largest request read so far, bytes: the estimate reserved for the next one. */
    private int largestRequest;
    /** Counts its waits at a per-connection limit and undrained ({@link WaitReason#UNDRAINED}) when they start. */
    private final WaitStarts waits;
    /** Its client once seen throttled, and its probation ({@link ThrottledClients}); {@code null} until then. */
    private ClientProbation client;

    /** {@code largestRequest}: of those seen on it so far, bytes (0 for none); {@code queues}: its processor's. */
    ConnectionPipeline(
            String id,
            ProcessorQueues<Q, S, ConnectionPipeline<Q, S>> queues,
            PipelineStats stats,
            Ticker ticker,
            int largestRequest) {
        super(id, queues);
        this.queues = queues;
        this.stats = stats;
        this.ticker = ticker;
        this.upgradedNanos = ticker.nanos();
        this.largestRequest = largestRequest;
        this.inflight = new InflightRequests<>(stats);
        this.hold = new DrainHold<>(stats);
        this.pressure = new PressureWait(stats);
        this.machine = new ConnectionStateMachine(stats, ticker);
        this.waits = new WaitStarts(stats);
        this.reservation = queues.newReservation(this);
    }

    /**
     * Moves it to its next state ({@link ConnectionStateMachine#move} by {@link ConnectionState#next}'s table: an
     * illegal move is counted, leads to CLOSING_AFTER_DRAIN, and the caller mutes and schedules it); entering
     * CLOSING_AFTER_DRAIN drops a held re-authentication (it could only begin after the close). @return true if legal
     */
    boolean transition(ConnectionEvent event) {
        ConnectionState from = machine.state();
        boolean legal = machine.move(event, dispatch.active(), this);
        if (from == ConnectionState.DRAINING_REAUTHENTICATION
                && machine.state() == ConnectionState.CLOSING_AFTER_DRAIN) {
            hold.takeReauthentication();
        }
        return legal;
    }

    // ---------------------------------------------------------------- what happened (network thread unless noted)

    /** A pipelined request of {@code size} bytes was read (a legal REQUEST_READ): in flight, its dispatch begins. */
    void requestRead(
            Q request, RequestContext ctx, int size, PipelinedApi api, Reservations reservations, boolean upgrade) {
        reservations.settle(reservation, size, upgrade);
        largestRequest = Math.max(largestRequest, size);
        if (identity == null && ctx != null) {
            identity = ConnectionIdentity.of(ctx);
        }
        inflight.add(request, size, ticker.nanos(), api);
        dispatch.start(request);
        stats.waitStarted(WaitReason.AWAITING_DISPATCH);
        readMutedChannel();
    }

    /** @param topics the topics of the produce just read (kept while a storage plugin checks topics), or null */
    void producedTo(Object[] topics) {
        pressure.producedTo(topics);
    }

    /**
     * Thread: a handler. {@code KafkaApis.handle} returned for {@code request}: ends its dispatch phase, wakes the
     * processor unless a round is due anyway ({@link ProcessorQueues#dispatchSignalled}). @return true if it woke it
     */
    boolean dispatchEnded(Q request) {
        return dispatch.end(request) && queues.dispatchSignalled(this);
    }

    /** Thread: a handler. @return true if {@code request} is in the phase, now deferred past handle (KIP-890) */
    boolean dispatchDeferred(Q request) {
        return dispatch.defer(request);
    }

    /** @return true if a written response of the deferred request ended its dispatch phase now (the fallback) */
    boolean deferredRequestAnswered(Q request) {
        return dispatch.deferredFor(request) && dispatch.end(request);
    }

    /**
     * A response reached the network thread: placed in arrival order; it ends its request's dispatch phase unless that
     * is deferred (the broker answers only what it handled), and the connection is evaluated. @return its placement
     */
    InflightRequests.Placement responseReady(Q request, S response) {
        InflightRequests.Placement placement = inflight.responseReady(request, response);
        if (placement != InflightRequests.Placement.NOT_OURS && dispatch.endByResponse(request)
                || placement == InflightRequests.Placement.HELD && inflight.undrained()) {
            schedule(); // its dispatch phase ended, or it became undrained: muted at this round, not a read later
        }
        return placement;
    }

    /** A response's send ended: if it was the outstanding one (true), its request leaves and the next is released. */
    boolean responseWritten(S response, ByteBudget budget) {
        if (!inflight.written(response, budget)) {
            return false;
        }
        lastWrittenNanos = ticker.nanos();
        S next = inflight.releaseNext();
        if (next != null) {
            queues.responseReleased(next);
        }
        return true;
    }

    /** @return true if this is its first open throttle window (KIP-219) */
    boolean throttleStarted(long nowNanos) {
        return throttle.started(nowNanos);
    }

    /** @return how long it was throttled, ns, if this closed its last window; -1 otherwise */
    long throttleEnded(long nowNanos) {
        return throttle.ended(nowNanos);
    }

    /** @return its client once seen throttled, and its probation, or {@code null}; thread: any (racy, for the dump) */
    ClientProbation client() {
        return client;
    }

    /** @return its client's probation, made when its client is first seen throttled; network thread */
    ClientProbation probation() {
        return client != null ? client : (client = new ClientProbation());
    }

    /** Holds an exclusive request for the drain (its reservation goes back); counted in {@code held-requests}. */
    void hold(Q request, Reservations reservations) {
        reservations.release(reservation);
        hold.hold(request);
    }

    /** Holds a re-authentication for the drain (its reservation goes back); counted in {@code held-requests}. */
    void holdReauthentication(Reauthentication reauthentication, Reservations reservations) {
        hold.holdReauthentication(reauthentication);
        reservations.release(reservation);
    }

    /** @return the held request, no longer held (nor counted), or {@code null} */
    Q takeHeldRequest() {
        return hold.takeRequest();
    }

    /** @return the held re-authentication, no longer held (nor counted); {@code null} if none */
    Reauthentication takeHeldReauthentication() {
        return hold.takeReauthentication();
    }

    /** {@code kpipe.enable} is false: PIPELINED to DRAINING_DISABLED, its reservation given back. */
    void disabled(Reservations reservations) {
        reservations.release(reservation);
        transition(ConnectionEvent.DISABLED);
    }

    /** @return true if its held re-authentication waits for the quiet period now and a wake-up must be scheduled */
    boolean quietWaitStarted() {
        queues.quietWaitStarted(this);
        return hold.requestQuietWakeup();
    }

    /**
     * The connection closed: the responses it holds or released are discarded (the broker completes the one it sends)
     * and a held re-authentication dropped. @return the held request, queued as stock Kafka would have, or null
     */
    Q closed() {
        hold.takeReauthentication();
        inflight.discardResponses(queues::releasedResponseWithdrawn, queues.processor());
        return hold.takeRequest();
    }

    /** Let go of (handed back, closed): reservation and permits go back. @return its throttled ns if windowed, or -1 */
    long released(Reservations reservations, ByteBudget budget) {
        reservations.release(reservation);
        inflight.releaseAll(budget);
        return throttle.throttledFor(ticker.nanos());
    }

    /** @return why it must stay muted now, {@link WaitReason#bit()}s (0 if none); edge-counted: {@link WaitStarts} */
    int muteReasons(InflightLimits limits) {
        int r = inflight.undrained() ? WaitReason.UNDRAINED.bit() : 0;
        if (!limits.admitsAnother(inflight.size(), inflight.bytes())) {
            r |= WaitReason.INFLIGHT_LIMIT.bit();
        }
        if (dispatch.active()) {
            r |= (dispatch.deferred() ? WaitReason.AWAITING_APPEND : WaitReason.AWAITING_DISPATCH).bit();
        }
        if (throttle.throttled()) {
            r |= WaitReason.THROTTLED.bit();
        }
        if (client != null && client.holds(inflight.isEmpty())) {
            r |= WaitReason.CLIENT_THROTTLED.bit();
        }
        waits.evaluated(r);
        return r;
    }

    /** @return true if the storage side kept it muted from now (a wait counted, listed with its processor) */
    boolean pressureWaitStarted(boolean global) {
        boolean started = pressure.started();
        queues.pressureWaitStarted(this, started, global);
        return started;
    }

    /** Storage pressure no longer holds it (its processor prunes its list at the round's end). */
    void pressureWaitEnded() {
        if (pressure.ended()) {
            queues.pressureWaitEnded();
        }
    }

    /**
     * Reserves the byte budget for its next read (its largest request so far); a wait is counted when it starts.
     * @return true if it holds one now; false if it waits ({@link #admitted} follows)
     */
    boolean reserveNextRead(Reservations reservations) {
        boolean waited = reservation.waiting();
        boolean reserved = reservations.reserve(reservation, largestRequest, queues.round());
        if (!reserved && !waited) {
            stats.waitStarted(WaitReason.BUDGET);
        }
        return reserved;
    }

    /** Thread: any, no wake-up. Evaluated at its processor's next round ({@code kpipe.enable} turned off). */
    void signalled() {
        queues.signalled(this, false);
    }

    // ---------------------------------------------------------------- read-only queries

    /** @return the connection's state; thread: any (volatile) */
    ConnectionState state() {
        return machine.state();
    }

    /** @return who it belongs to, from the first request kpipe read on it, or {@code null}; thread: any (volatile) */
    ConnectionIdentity identity() {
        return identity;
    }

    /** @return when kpipe took it over (the coordinator's clock, ns); thread: any */
    long upgradedNanos() {
        return upgradedNanos;
    }

    /** @return its requests in flight, read-only; the published counts on any thread, the rest network thread */
    InflightView<Q, S> inflight() {
        return inflight;
    }

    /** @return true if a request is in the dispatch phase; thread: any (volatile) */
    boolean awaitingDispatch() {
        return dispatch.active();
    }

    /** @return true if the request in the dispatch phase waits for its deferred append; thread: any (volatile) */
    boolean awaitingAppend() {
        return dispatch.deferred();
    }

    /** @return true while a throttle window (KIP-219) is open; thread: any (a moment stale from another) */
    boolean throttled() {
        return throttle.throttled();
    }

    /** @return its open throttle windows */
    int throttleWindows() {
        return throttle.open();
    }

    /** @return true while it waits for the byte budget; thread: any (a moment stale from another) */
    boolean budgetWaiting() {
        return reservation.waiting();
    }

    /** @return the bytes its reservation holds for its next read */
    long reserved() {
        return reservation.reserved();
    }

    /** @return the first violated invariant of its requests in flight or its reservation, or {@code null} */
    String partsViolation() {
        String v = inflight.invariantViolation();
        return v != null ? v : reservation.invariantViolation();
    }

    /** @return true if nothing is outstanding: nothing in flight, in the dispatch phase or throttled */
    boolean nothingOutstanding() {
        return inflight.isEmpty() && !dispatch.active() && !throttle.throttled();
    }

    /** @return when the connection last finished writing a response (the coordinator's clock), or 0 */
    long lastWrittenNanos() {
        return lastWrittenNanos;
    }

    /** @return the held request or re-authentication, or {@code null} */
    Object held() {
        return hold.held();
    }

    /** @return true while kept muted by storage-side saturation; thread: any (a moment stale from another) */
    boolean pressureBlocked() {
        return pressure.waiting();
    }

    /** @return the topics of its last produce, if kept, else {@code null} */
    Object[] produceTopics() {
        return pressure.topics();
    }

    /** @return true while kpipe owns the connection ({@link ConnectionState#owned()}) */
    @Override
    public boolean owned() {
        return machine.state().owned();
    }

    @Override
    ConnectionPipeline<Q, S> self() {
        return this;
    }

    /** @return true if it reads now: PIPELINED and unmuted */
    @Override
    public boolean reading() {
        return !muted() && machine.state() == ConnectionState.PIPELINED;
    }

    // ---------------------------------------------------------------- Reservation.Holder

    /** Thread: any. The budget granted the reservation: evaluate this connection on its own thread. */
    @Override
    public void admitted() {
        reservation.granted();
        queues.signalled(this, true);
    }

    /** Its idle reservation is revoked: muted, and evaluated again at the next safe point. Network thread. */
    @Override
    public void revoke() {
        mute();
        schedule();
    }

    @Override
    public String toString() {
        return "connection " + id() + " " + machine.state() + " " + inflight + " throttles=" + throttle.open()
                + " awaitingDispatch=" + dispatch.active() + " held=" + (hold.held() != null) + " muted="
                + muted() + " " + reservation;
    }
}
