package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.RequestClass;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.quotas.MuteReason;
import dev.kpipe.quotas.MuteReasons;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerLoad;
import dev.kpipe.spi.MuteEvent;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.StoragePressure;
import dev.kpipe.spi.TopicNames;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two-phase pipelining model (dispatch in arrival order, completions overlapping, responses
 * written in arrival order) for the connections of every processor of the pipelined listeners.
 *
 * <p>Per connection:
 * <ul>
 *   <li><b>classic</b> (no state here): Kafka's own mute state machine; a {@link RequestClass#PIPELINED}
 *       request <b>upgrades</b> the connection.</li>
 *   <li><b>pipelined</b>: after a request is read the connection stays muted until the handler
 *       returns from {@code KafkaApis.handle} (dispatched; for a transactional produce the broker verifies first,
 *       KIP-890, once its append ran in the post-verification callback: {@link #onDispatchDeferred}), then it is
 *       unmuted unless another mute
 *       reason holds (throttled, in-flight limit). So at most one request per connection is ever in
 *       the dispatch phase and appends happen in arrival order whatever {@code num.io.threads} is.
 *       Responses are handed to the broker one at a time, in arrival order; correlation ids are never
 *       looked at. An acks=0 produce's no-op response takes its turn like any other.</li>
 *   <li><b>draining</b>: an {@link RequestClass#EXCLUSIVE} request arrived; it is held, the
 *       connection stays muted, and when every earlier response is written and no throttle window
 *       is open, the connection is handed back to Kafka in the state Kafka expects right after
 *       reading a request ({@code REQUEST_RECEIVED} on a muted channel) and the request is queued
 *       (<b>downgrade</b>).</li>
 * </ul>
 * A SASL re-authentication (KIP-368: a {@code SASL_HANDSHAKE} on an authenticated connection, which
 * Kafka handles on the network thread, its authenticator writing straight to the socket) drains the
 * same way when responses are outstanding: kpipe mutes the connection and holds the handshake until
 * every earlier response is written, then hands the connection back to Kafka unmuted, as Kafka
 * leaves it after writing a response, and begins the re-authentication as Kafka would have. So the
 * client sees what stock Kafka sends: every earlier response, then the re-authentication exchange.
 * Throttle start/end (KIP-219) are control events: they bypass the ordering and become a mute
 * reason of their own.
 *
 * <p>A request the broker refuses after kpipe read ahead (it does not parse, its API or version is unsupported)
 * closes its connection only once every earlier response is written ({@link #onRequestRejected}), as stock Kafka,
 * which reads the next request only after answering, would.
 *
 * <p><b>Disabled</b> ({@link #enabled(boolean) enabled(false)}, {@code kpipe.enable=false} altered at runtime): no
 * connection is upgraded any more, and every pipelined connection drains on its own network thread: it is muted (no
 * request read), every response already in flight is still written, in arrival order, and once none is left (and no
 * throttle window is open) Kafka takes the connection back idle and readable: a classic connection, as if it had
 * never been pipelined. A request read before the drain started is handled like an exclusive one. Enabled again,
 * connections upgrade on their next pipelined request.
 *
 * <p>Threads: every method runs on the network thread of the connection's processor, except
 * {@link #onRequestDispatched} and {@link #onDispatchDeferred} (handler threads), {@link #onTopicNames} and the setters
 * (any). Nothing blocks.
 *
 * <p>Faults: no throwable leaves this class into a broker thread. A throwable of the classification policy makes the
 * request exclusive (handled classically; {@code classification-fallback-total}); of the storage-side signal, the
 * connection being evaluated reads its next request as a classic connection would, once every earlier response is
 * written; of the evaluation of a connection (back pressure, muting), a connection nothing would evaluate again is
 * handed back to Kafka; a response kpipe cannot place is processed by the broker as it comes while the responses kpipe
 * holds stay held. All but the first count in {@code plugin-fault-total}.
 */
public final class PipelineCoordinator implements NetworkEventListener {

    private static final Logger LOG = LoggerFactory.getLogger(PipelineCoordinator.class);
    /** Faults that could repeat per request: WARN once each, then DEBUG (see {@link FaultLog}). */
    private final FaultLog evaluateFailed = new FaultLog(LOG);

    private final RequestClassifier classifier;
    private volatile InflightLimits limits;
    private final PipelineStats stats;
    /** How long a reservation may stay unused while others wait for the budget: 20 ms ({@link Reservations}). */
    static final long IDLE_RESERVATION_NANOS = Reservations.IDLE_NANOS;
    /** The re-authentication quiet period: 100 ms ({@link QuietPeriod}). */
    static final long REAUTHENTICATION_QUIET_NANOS = QuietPeriod.NANOS;

    /** Wakes a processor after a delay, so that it runs a round then (the end of a quiet period). */
    @FunctionalInterface
    public interface WakeupTimer {
        /**
         * @param processor the processor to wake ({@link NetworkProcessor#wakeup()}, any thread)
         * @param delayNanos how long from now, in ns
         */
        void wakeup(NetworkProcessor processor, long delayNanos);

        /**
         * @return the real timer: one daemon thread, {@code kpipe-timer}, started the first time a wake-up is asked
         *     for; a wake-up that throws is logged at DEBUG
         */
        static WakeupTimer daemon() {
            return QuietPeriod::daemonWakeup;
        }
    }

    /** The clock (the broker binding passes {@link Ticker#SYSTEM}; the fake broker simulates time). */
    private final Ticker ticker;
    /** Reservations of the budget for the next read of each connection. */
    private final Reservations reservations;
    /** Arrival order of responses, one send per connection. */
    private final ResponseSequencer sequencer;
    /** The re-authentication quiet period (its timer is passed in). */
    private final QuietPeriod quiet;
    /** Drain and hand-back. */
    private final Drains drains;
    /** Classification, upgrade, holds: what a request read or a re-authentication does. */
    private final Admissions admissions;
    /**
     * The broker-wide in-flight byte budget; always present ({@link ByteBudget#unbounded} when none is configured).
     * Each request's slot holds its permit ({@link Slot#releasePermit}).
     */
    private final ByteBudget budget;
    private volatile StoragePressure pressure = StoragePressure.NONE;
    private volatile Function<BrokerLoad, StoragePressure> pressureFactory;
    /** Connections kpipe owns, by connection id (unique among a broker's open connections). */
    private final ConcurrentHashMap<String, ConnectionPipeline> connections = new ConcurrentHashMap<>();
    /** {@code kpipe.enable}: false stops upgrades and drains every pipelined connection. Network threads read it. */
    private volatile boolean enabled = true;

    /**
     * @param classifier the classification policy
     * @param limits the per-connection in-flight limits
     * @param budget the broker-wide in-flight byte budget ({@link ByteBudget#unbounded} when none is configured)
     * @param stats where to count
     * @param ticker the clock: request ages, drain and throttle times, idle reservations, the re-authentication quiet
     *     period; the same clock as the budget's
     * @param wakeupTimer wakes a processor at the end of a re-authentication quiet period
     */
    public PipelineCoordinator(RequestClassifier classifier, InflightLimits limits, ByteBudget budget,
                               PipelineStats stats, Ticker ticker, WakeupTimer wakeupTimer) {
        this.ticker = ticker;
        this.classifier = classifier;
        this.limits = limits;
        this.budget = java.util.Objects.requireNonNull(budget, "budget");
        this.stats = stats;
        this.reservations = new Reservations(budget, stats, ticker);
        this.sequencer = new ResponseSequencer(connections, stats, budget, ticker);
        this.quiet = new QuietPeriod(ticker, wakeupTimer);
        this.drains = new Drains(stats, ticker, reservations, quiet, this::release);
        this.admissions = new Admissions(classifier, connections, stats, ticker, reservations, quiet, this::release,
            () -> this.enabled);
        stats.connectionTable(connections);
    }

    /**
     * Sets the storage-side saturation signal; while it reports saturation no pipelined connection
     * is unmuted (connections kept muted by it are re-evaluated every processor round, at least every
     * 300 ms). Thread: any.
     *
     * @param pressure the signal
     */
    public void pressure(StoragePressure pressure) {
        this.pressure = pressure;
    }

    /**
     * Sets how the storage-side signal is built once the broker's queue gauges are available
     * ({@link #onBrokerLoad}). Thread: any.
     *
     * @param factory builds the signal from the gauges
     */
    public void pressureFactory(Function<BrokerLoad, StoragePressure> factory) {
        this.pressureFactory = factory;
    }

    @Override
    public void onBrokerLoad(BrokerLoad load) {
        Function<BrokerLoad, StoragePressure> f = pressureFactory;
        if (f != null) {
            pressure = f.apply(load);
        }
    }

    /** @return the broker-wide byte budget (never {@code null}) */
    public ByteBudget budget() {
        return budget;
    }

    /** @return the counters */
    public PipelineStats stats() {
        return stats;
    }

    /**
     * What the connection dump shows: a snapshot of every connection kpipe owns now, read racily from the state its
     * network thread publishes (see {@link ConnectionSnapshot}). Computed only when called; allocates per connection
     * then, nothing on the request path. Thread: any (a JMX thread); takes no lock.
     *
     * @return one snapshot per pipelined or draining connection, in no particular order
     */
    public java.util.List<ConnectionSnapshot> connectionSnapshots() {
        long now = ticker.nanos();
        InflightLimits l = limits;
        java.util.List<ConnectionSnapshot> out = new ArrayList<>(connections.size());
        for (ConnectionPipeline c : connections.values()) {
            out.add(ConnectionSnapshot.of(c, l, now));
        }
        return out;
    }

    /**
     * Changes the per-connection limits; connections pick them up at their next evaluation.
     * Thread: any.
     *
     * @param limits the new limits
     */
    public void limits(InflightLimits limits) {
        this.limits = limits;
    }

    /** @return the current per-connection limits; thread: any */
    public InflightLimits limits() {
        return limits;
    }

    /**
     * Turns pipelining on or off at runtime ({@code kpipe.enable} altered through Kafka's dynamic broker config).
     * Off: no connection is upgraded from now on, and every pipelined connection is drained back to classic on its
     * own network thread (see the class comment); this method only flags them and wakes their processors, it does
     * not wait for the drains. On: connections upgrade again on their next pipelined request. Idempotent.
     * Thread: any (Kafka calls it on its config thread).
     *
     * @param enabled the new value
     */
    public void enabled(boolean enabled) {
        this.enabled = enabled;
        if (enabled) {
            return;
        }
        // Every connection kpipe owns is evaluated at its processor's next round, where it starts to drain. One that
        // is upgraded concurrently with this call is put in the map before its first request is dispatched, and is
        // evaluated after that dispatch, by which time it reads enabled == false.
        java.util.Set<ProcessorPipelines> woken = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (ConnectionPipeline conn : connections.values()) {
            conn.processor.dispatched.add(conn);
            if (woken.add(conn.processor)) {
                conn.processor.processor.wakeup();
            }
        }
    }

    /** @return whether pipelining is on ({@link #enabled(boolean)}); thread: any */
    public boolean enabled() {
        return enabled;
    }

    /**
     * Replaces the topic policy (see {@link RequestClassifier#topics(dev.kpipe.plugin.classify.TopicPolicy)}).
     * Thread: any.
     *
     * @param topics the new policy
     */
    public void topics(dev.kpipe.plugin.classify.TopicPolicy topics) {
        classifier.topics(topics);
    }

    @Override
    public void onTopicNames(TopicNames topicNames) {
        classifier.topicNames(topicNames);
    }

    // ---------------------------------------------------------------- requests

    @Override
    public Admission onRequestReceived(NetworkProcessor processor, Object request, RequestContext context,
                                       AbstractRequest body, int sizeInBytes) {
        return admissions.received(processor, request, context, body, sizeInBytes);
    }

    @Override
    public boolean onReauthentication(NetworkProcessor processor, String connectionId, Object reauthentication) {
        return admissions.reauthentication(processor, connectionId, reauthentication);
    }

    /**
     * Forgets a connection: Kafka owns it again (downgrade, {@link ConnectionEvent#HAND_BACK}, legal from PIPELINED
     * and the draining states, which every caller checks) or it is closed ({@link ConnectionEvent#CLOSE}).
     */
    private void release(ConnectionPipeline conn, ConnectionEvent event) {
        conn.transition(event);
        if (connections.remove(conn.id, conn)) {
            stats.pipelinedConnections.decrementAndGet();
            stats.inflightRequests.addAndGet(-conn.slots.size());
            long throttledFor = conn.throttle.throttledFor(ticker.nanos());
            if (throttledFor >= 0) {
                stats.throttledConnections.decrementAndGet();
                stats.throttleTimeNanos.add(throttledFor);
            }
            reservations.release(conn);
            // each slot's permit, once (empty when handed back: a hand-back waits for every response)
            for (Slot s : conn.slots) {
                s.releasePermit(budget);
            }
            conn.inflightBytes = 0;
        }
    }

    @Override
    public void onRequestDispatched(Object request, RequestContext context) {
        ConnectionPipeline conn = connections.get(context.connectionId);
        if (conn == null || conn.awaitingDispatch != request) {
            return;
        }
        conn.awaitingDispatch = null;
        conn.awaitingAppend = null;
        ProcessorPipelines p = conn.processor;
        p.dispatched.add(conn);
        p.processor.wakeup();
    }

    /**
     * A pipelined transactional produce awaits its append (KIP-890): the connection stays muted until
     * {@link #onRequestDispatched} (counted in {@code deferred-dispatch-total}; the dump shows {@code awaiting-append}).
     * Thread: a handler thread.
     */
    @Override
    public void onDispatchDeferred(Object request, RequestContext context) {
        ConnectionPipeline conn = connections.get(context.connectionId);
        if (conn != null && conn.awaitingDispatch == request) {
            conn.awaitingAppend = request;
            stats.deferredDispatches.increment();
        }
    }

    /** Without deferred dispatch, transactional produce stays exclusive (one ERROR). Thread: the installing thread. */
    @Override
    public void onDeferredDispatchSupport(boolean supported, String detail) {
        classifier.deferredDispatch(supported);
        if (!supported) {
            LOG.error("kpipe: cannot see when a verified transactional append happens (KIP-890): {}; transactional "
                + "produce stays exclusive on this broker, everything else is pipelined", detail);
        }
    }

    /**
     * Sets {@code kpipe.transactions.pipelined} (see {@link RequestClassifier#transactionsPipelined(boolean)}).
     * Thread: any.
     *
     * @param pipelined whether transactional produce may be pipelined
     */
    public void transactionsPipelined(boolean pipelined) {
        classifier.transactionsPipelined(pipelined);
    }

    // ---------------------------------------------------------------- rounds

    @Override
    public void onProcessorRound(NetworkProcessor processor) {
        ProcessorPipelines p = ProcessorPipelines.of(processor);
        p.rounds++;
        ConnectionPipeline conn;
        while ((conn = p.dispatched.poll()) != null) {
            conn.schedule();
        }
        if (!p.holders.isEmpty()) {
            reservations.revokeIdle(p);
        }
        if (!p.awaitingQuiet.isEmpty()) {
            for (ConnectionPipeline c : p.awaitingQuiet) {
                c.schedule();
            }
            p.awaitingQuiet.clear();
        }
        if (!p.pressureBlocked.isEmpty() && storageSignal() != SATURATED) {
            for (ConnectionPipeline c : p.pressureBlocked) {
                c.pressureBlocked = false;
                c.schedule();
            }
            p.pressureBlocked.clear();
        }
        ArrayList<ConnectionPipeline> pending = p.pending;
        // evaluate() may schedule again (not the same connection); index loop tolerates appends
        for (int i = 0; i < pending.size(); i++) {
            ConnectionPipeline c = pending.get(i);
            c.scheduled = false;
            try {
                evaluate(c);
            } catch (Throwable e) {
                stats.pluginFaults.increment();
                evaluateFailed.fault("kpipe: failed to evaluate {}", c, e);
                recover(c);
            }
        }
        pending.clear();
    }

    /** {@link #storageSignal()}: the storage side can take more work. */
    private static final int CLEAR = 0;
    /** {@link #storageSignal()}: the storage side is saturated. */
    private static final int SATURATED = 1;
    /** {@link #storageSignal()}: the signal threw (counted as a plugin fault). */
    private static final int FAULT = 2;

    /** @return the storage-side signal: {@link #CLEAR}, {@link #SATURATED}, or {@link #FAULT} if it threw (counted) */
    private int storageSignal() {
        try {
            return pressure.saturated() ? SATURATED : CLEAR;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.debug("kpipe: the storage pressure signal threw", e);
            return FAULT;
        }
    }

    /**
     * After {@link #evaluate} threw: makes sure the connection cannot wedge. One that is muted with nothing in flight,
     * nothing held and no throttle window (nothing would evaluate it again) is handed back to Kafka, which reads its
     * next request classically; any other is evaluated again by its next completion, dispatch or throttle end.
     */
    private void recover(ConnectionPipeline c) {
        try {
            if (c.state() == ConnectionState.PIPELINED && c.muted && c.slots.isEmpty() && c.awaitingDispatch == null
                && !c.throttle.throttled()) {
                release(c, ConnectionEvent.HAND_BACK);
                stats.downgrades.increment();
                // Kafka's channel is MUTED (kpipe muted it); unmuting leaves it NOT_MUTED, as after a response.
                c.processor.processor.unmute(c.id);
            }
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.warn("kpipe: failed to hand {} back to Kafka", c, e);
        }
    }

    /** Applies the connection's mute reasons, or completes its drain. Network thread, safe point. */
    private void evaluate(ConnectionPipeline conn) {
        ConnectionState state = conn.state();
        if (!state.owned()) {
            // Closed, or no longer kpipe's: a handler thread may queue a connection in dispatched
            // after it was handed back to Kafka (its awaitingDispatch was already cleared).
            return;
        }
        NetworkProcessor processor = conn.processor.processor;
        if (state == ConnectionState.CLOSING_AFTER_DRAIN) {
            if (conn.slots.isEmpty() && conn.awaitingDispatch == null) {
                processor.close(conn.id); // onConnectionClosed follows
            } else if (!conn.muted) {
                processor.mute(conn.id);
                conn.muted = true;
            }
            return;
        }
        if (!enabled && state == ConnectionState.PIPELINED) {
            drains.startDisabledDrain(conn);
            state = ConnectionState.DRAINING_DISABLED;
        }
        if (state.draining()) {
            drains.evaluate(conn, processor);
            return;
        }
        int reasons = conn.muteReasons(limits);
        if (reasons == MuteReasons.NONE) {
            int signal = storageSignal();
            if (signal == SATURATED) {
                reasons = MuteReasons.with(reasons, MuteReason.BACK_PRESSURE);
                if (!conn.pressureBlocked) {
                    conn.pressureBlocked = true;
                    conn.processor.pressureBlocked.add(conn);
                }
            } else if (signal == FAULT && !conn.slots.isEmpty()) {
                // The back-pressure check failed: the connection reads its next request as a classic connection
                // would, once every earlier response is written (each completion evaluates it again).
                reasons = MuteReasons.with(reasons, MuteReason.BACK_PRESSURE);
            }
        }
        if (reasons == MuteReasons.NONE && !reservations.reserve(conn)) {
            reasons = MuteReasons.with(reasons, MuteReason.BACK_PRESSURE);
        }
        if (reasons == MuteReasons.NONE) {
            if (conn.muted) {
                processor.unmute(conn.id);
                conn.muted = false;
            }
        } else if (!conn.muted) {
            processor.mute(conn.id);
            conn.muted = true;
        }
    }

    // ---------------------------------------------------------------- responses (see ResponseSequencer)

    @Override
    public Object onResponseDequeued(NetworkProcessor processor, Object response) {
        return sequencer.dequeued(processor, response);
    }

    @Override
    public void onResponseCompleted(NetworkProcessor processor, Object response) {
        ConnectionPipeline conn = sequencer.completed(processor, response);
        if (conn != null) {
            Object appending = conn.awaitingAppend;
            if (appending != null && appending == conn.awaitingDispatch && processor.requestOf(response) == appending) {
                // The response of a deferred append is written, so the append happened (the broker answers a produce
                // only after it): a completion the broker's hooks missed must not keep the connection muted for good.
                conn.awaitingDispatch = null;
                conn.awaitingAppend = null;
            }
            conn.schedule();
        }
    }


    // ---------------------------------------------------------------- mute events, close

    @Override
    public boolean onMuteEvent(NetworkProcessor processor, String connectionId, MuteEvent event) {
        ConnectionPipeline conn = connections.get(connectionId);
        if (conn == null) {
            if (event == MuteEvent.THROTTLE_STARTED && processor.attachment() instanceof ProcessorPipelines p) {
                // Kafka's channel enters a throttled state kpipe would not know of: no take-over.
                p.upgradesDeferred.remove(connectionId);
            }
            return false;
        }
        switch (event) {
            case THROTTLE_STARTED:
                if (conn.throttle.started(ticker.nanos())) {
                    stats.throttledConnections.incrementAndGet();
                }
                stats.throttleWindows.increment();
                conn.schedule();
                break;
            case THROTTLE_ENDED:
                long throttledFor = conn.throttle.ended(ticker.nanos());
                if (throttledFor >= 0) {
                    stats.throttledConnections.decrementAndGet();
                    stats.throttleTimeNanos.add(throttledFor);
                }
                conn.schedule();
                break;
            default:
                // REQUEST_RECEIVED / RESPONSE_SENT of requests kpipe owns: not Kafka's to see.
                break;
        }
        return true;
    }

    /**
     * A request kpipe read ahead on a pipelined connection was refused by the broker (it does not parse, its API or
     * version is not supported). Stock Kafka would have met it only after answering every earlier request, then closed
     * the connection; so does kpipe: the connection stays muted, its earlier responses are written in order, then it
     * is closed ({@link #evaluate}). A connection with nothing in flight is closed by the broker at once.
     */
    @Override
    public boolean onRequestRejected(NetworkProcessor processor, String connectionId) {
        ConnectionPipeline conn = connections.get(connectionId);
        if (conn == null || conn.slots.isEmpty()) {
            return false;
        }
        conn.transition(ConnectionEvent.REQUEST_REJECTED);
        conn.muteAndSchedule();
        stats.deferredCloses.increment();
        return true;
    }

    @Override
    public boolean onTryUnmute(NetworkProcessor processor, String connectionId) {
        if (connections.containsKey(connectionId)) {
            return true;
        }
        Object attachment = processor.attachment();
        if (attachment == null) {
            return false;
        }
        ProcessorPipelines p = (ProcessorPipelines) attachment;
        Integer deferred = p.upgradesDeferred.isEmpty() ? null : p.upgradesDeferred.remove(connectionId);
        if (deferred == null || !enabled) {
            return false; // disabled since the upgrade was deferred: the connection stays Kafka's
        }
        // The response of the request whose upgrade was deferred is written, and Kafka's channel is
        // MUTED (no throttle: THROTTLE_STARTED cancels the take-over), as after any read. kpipe takes the
        // connection over with nothing in flight, keeps it muted and unmutes it once it holds budget.
        ConnectionPipeline conn = new ConnectionPipeline(connectionId, p, stats, ticker.nanos());
        conn.largestRequest = deferred;
        conn.muted = true;
        connections.put(connectionId, conn);
        stats.pipelinedConnections.incrementAndGet();
        stats.upgrades.increment();
        conn.schedule();
        processor.wakeup();
        return true;
    }

    @Override
    public void onConnectionClosed(NetworkProcessor processor, String connectionId) {
        ConnectionPipeline conn = connections.get(connectionId);
        if (conn == null) {
            Object attachment = processor.attachment();
            if (attachment != null) {
                ((ProcessorPipelines) attachment).upgradesDeferred.remove(connectionId);
            }
            return;
        }
        ConnectionState was = conn.state();
        Object held = conn.held;
        conn.held = null;
        release(conn, ConnectionEvent.CLOSE);
        sequencer.discard(conn, processor);
        conn.slots.clear();
        if (held == null) {
            return;
        }
        stats.heldRequests.decrementAndGet();
        if (was != ConnectionState.DRAINING_REAUTHENTICATION) {
            // Stock Kafka would have queued it as soon as it was read; so does kpipe, now. (A held re-authentication
            // is dropped: the connection is gone, nothing to re-authenticate.)
            processor.forward(held);
        }
    }
}
