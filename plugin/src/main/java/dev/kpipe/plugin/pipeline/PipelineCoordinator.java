// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.extension.StoragePressure;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.classify.RequestClass;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.BrokerLoad;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import java.util.ArrayList;
import java.util.function.Function;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The two-phase pipelining model (dispatch in arrival order, completions overlapping, responses written in arrival
 * order) for the connections of every processor of the pipelined listeners.
 *
 * <p>Per connection:
 * <ul>
 *   <li><b>classic</b> (no state here): Kafka's own mute state machine; a {@link RequestClass#PIPELINED} request
 *       <b>upgrades</b> the connection.</li>
 *   <li><b>pipelined</b>: after a request is read the connection stays muted until it is dispatched: the handler
 *       returned from {@code KafkaApis.handle} or, for a transactional produce or TXN_OFFSET_COMMIT the broker first
 *       verifies with the transaction coordinator (KIP-890, {@link #onDispatchDeferred}), its write ran in the
 *       post-verification callback. Then it is unmuted unless another mute reason holds (throttled, in-flight
 *       limit). So at most one request per connection is ever in the dispatch phase and its writes happen in arrival
 *       order whatever {@code num.io.threads} is.
 *       Responses are handed to the broker one at a time, in arrival order; correlation ids are never looked at.
 *       An acks=0 produce's no-op response takes its turn like any other.</li>
 *   <li><b>draining</b>: an {@link RequestClass#EXCLUSIVE} request arrived; it is held, the connection stays muted,
 *       and when every earlier response is written and no throttle window is open, the connection is handed back to
 *       Kafka as right after reading a request ({@code REQUEST_RECEIVED}, muted) and the request is queued
 *       (<b>downgrade</b>).</li>
 * </ul>
 * A SASL re-authentication (KIP-368: a {@code SASL_HANDSHAKE} on an authenticated connection, handled on the network
 * thread) drains the same way when responses are outstanding: held until every earlier response is written, then the
 * connection is handed back unmuted and the re-authentication begins, so the client sees what stock Kafka sends.
 * Throttle start/end (KIP-219) are control events: they bypass the ordering and become a mute reason of their own.
 *
 * <p>A request the broker refuses after kpipe read ahead (it does not parse, its API or version is unsupported)
 * closes its connection only once every earlier response is written ({@link #onRequestRejected}), as stock Kafka,
 * which reads the next request only after answering, would.
 *
 * <p><b>Disabled</b> ({@link #enabled(boolean) enabled(false)}): no connection is upgraded any more, and every
 * pipelined connection drains back to classic on its own network thread, its responses in flight still written in
 * arrival order ({@link DynamicSettings}).
 *
 * <p>Threads: every method runs on the network thread of the connection's processor, except
 * {@link #onRequestDispatched} and {@link #onDispatchDeferred} (request handler threads, or whichever thread completes
 * a verified write), {@link #onBrokerServices} and the setters (any). Nothing blocks.
 *
 * <p>Faults: no throwable but a {@link VirtualMachineError} (an {@link OutOfMemoryError}: the JVM's, not kpipe's to
 * swallow) leaves this class into a broker thread; what each kind of fault leads to, and which count in
 * {@code plugin-fault-total}, is in {@code docs/core.md} ("Faults").
 */
public final class PipelineCoordinator<Q, S> implements NetworkEventListener<Q, S> {

    private final RequestClassifier classifier;
    private final PipelineStats stats;
    /** How long a reservation may stay unused while others wait for the budget: 20 ms ({@link Reservations}). */
    static final long IDLE_RESERVATION_NANOS = Reservations.IDLE_NANOS;
    /** The re-authentication quiet period: 100 ms ({@link QuietPeriod}). */
    static final long REAUTHENTICATION_QUIET_NANOS = QuietPeriod.NANOS;

    /** The clock (the broker binding passes {@link Ticker#SYSTEM}; the fake broker simulates time). */
    private final Ticker ticker;
    /** Reservations of the budget for the next read of each connection. */
    private final Reservations reservations;

    private final ResponseSequencer<Q, S> sequencer;
    /** Classification, upgrade, holds: what a request read or a re-authentication does. */
    private final Admissions<Q, S> admissions;
    /** The broker-wide in-flight byte budget ({@link ByteBudget#unbounded} if none is configured): slots' permits. */
    private final ByteBudget budget;
    /** The storage-side saturation signal. */
    private final StorageSignal signal;
    /** The per-connection limits and {@code kpipe.enable}, altered at runtime. */
    private final DynamicSettings settings;
    /** Processor rounds: the evaluation of connections (mute reasons, drains). */
    private final Rounds<Q, S> rounds;

    private final Throttles throttles;
    /** Take-over after a deferred upgrade, hand-back and close. */
    private final Ownership<Q, S> ownership;
    /** Transactional produce and TXN_OFFSET_COMMIT whose write the broker defers past handle (KIP-890). */
    private final DeferredDispatch<Q, S> deferredDispatch;
    /** kpipe's state of each processor of this broker. */
    private final ProcessorTable<Q, S> processors = new ProcessorTable<>();
    /** Connections kpipe owns, by connection id (unique among a broker's open connections). */
    private final ConnectionTable<Q, S> connections;

    /**
     * @param classifier the classification policy
     * @param limits the per-connection in-flight limits
     * @param budget the broker-wide in-flight byte budget ({@link ByteBudget#unbounded} when none is configured)
     * @param stats where to count
     * @param ticker the clock: request ages, drain and throttle times, idle reservations, the re-authentication quiet
     *     period; the same clock as the budget's
     * @param wakeupTimer wakes a processor at the end of a re-authentication quiet period
     */
    public PipelineCoordinator(
            RequestClassifier classifier,
            InflightLimits limits,
            ByteBudget budget,
            PipelineStats stats,
            Ticker ticker,
            WakeupTimer wakeupTimer) {
        this.ticker = ticker;
        this.classifier = classifier;
        this.settings = new DynamicSettings(limits);
        this.signal = new StorageSignal(stats);
        this.budget = java.util.Objects.requireNonNull(budget, "budget");
        this.stats = stats;
        this.connections = new ConnectionTable<>(stats);
        this.reservations = new Reservations(budget, ticker, stats.reservationsRevoked, stats.pluginFaults);
        this.sequencer = new ResponseSequencer<>(processors, connections, stats, budget);
        this.throttles = new Throttles(stats, ticker);
        this.ownership = new Ownership<>(
                processors, connections, stats, ticker, budget, reservations, throttles, settings::enabled);
        QuietPeriod quiet = new QuietPeriod(ticker, wakeupTimer);
        Drains.Release<Q, S> release = ownership::release;
        Drains<Q, S> drains = new Drains<>(reservations, quiet, release);
        this.admissions = new Admissions<>(
                processors,
                classifier,
                connections,
                stats,
                ticker,
                reservations,
                quiet,
                release,
                settings::enabled,
                signal::perTopic,
                throttles);
        this.rounds = new Rounds<>(
                processors, stats, settings, signal, reservations, drains, release, ticker, classifier::topicName);
        this.deferredDispatch = new DeferredDispatch<>(connections, classifier, stats);
    }

    /** @return kpipe's state of each processor of this broker (for the tests of this package) */
    ProcessorTable<Q, S> processorTable() {
        return processors;
    }

    /** @return the clients seen throttled (for the tests of this package) */
    ThrottledClients throttledClients() {
        return throttles.clients();
    }

    /**
     * @param pressure the storage-side saturation signal: while it reports saturation no pipelined connection is
     *     unmuted (those it keeps muted are re-evaluated every processor round, at least every 300 ms); thread: any
     */
    public void pressure(StoragePressure pressure) {
        signal.set(pressure);
    }

    /** @param factory builds the storage-side signal once the broker's gauges are ready ({@link #onBrokerServices}) */
    public void pressureFactory(Function<BrokerLoad, StoragePressure> factory) {
        signal.factory(factory);
    }

    /** The broker's topic-name resolver and queue gauges: for classification and the storage-side signal. */
    @Override
    public void onBrokerServices(BrokerServices services) {
        classifier.topicNames(services.topicNames());
        signal.onBrokerLoad(services.load());
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
        InflightLimits l = settings.limits();
        java.util.List<ConnectionSnapshot> out = new ArrayList<>();
        for (ConnectionPipeline<Q, S> c : connections.values()) {
            out.add(ConnectionSnapshot.of(c, l, now));
        }
        return out;
    }

    /** @param limits the new per-connection limits, picked up at each connection's next evaluation; thread: any */
    public void limits(InflightLimits limits) {
        settings.limits(limits);
    }

    /** @return the current per-connection limits; thread: any */
    public InflightLimits limits() {
        return settings.limits();
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
        settings.enabled(enabled, connections);
    }

    /** @return whether pipelining is on ({@link #enabled(boolean)}); thread: any */
    public boolean enabled() {
        return settings.enabled();
    }

    /** @param topics the new topic policy ({@link RequestClassifier#topics}); thread: any */
    public void topics(dev.kpipe.plugin.classify.TopicPolicy topics) {
        classifier.topics(topics);
    }

    // ---------------------------------------------------------------- requests

    @Override
    public Admission onRequestRead(
            NetworkProcessor<Q, S> processor,
            Q request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        return admissions.received(processor, request, context, body, sizeInBytes);
    }

    @Override
    public boolean onReauthentication(
            NetworkProcessor<Q, S> processor, String connectionId, Reauthentication reauthentication) {
        return admissions.reauthentication(processor, connectionId, reauthentication);
    }

    @Override
    public void onRequestDispatched(Q request, RequestContext context) {
        ConnectionPipeline<Q, S> conn = connections.get(context.connectionId);
        if (conn != null && conn.dispatchEnded(request)) {
            stats.processorWakeups.increment();
        }
    }

    /**
     * A pipelined request awaits its deferred order-defining write (KIP-890): the connection stays muted until
     * {@link #onRequestDispatched} (counted in {@code deferred-dispatch-total}; the dump shows {@code awaiting-append}).
     * Thread: a handler thread.
     */
    @Override
    public void onDispatchDeferred(Q request, RequestContext context) {
        deferredDispatch.deferred(context.connectionId, request);
    }

    /**
     * What the broker reports: the APIs without deferred dispatch keep their transactional requests exclusive (one
     * ERROR). Thread: the installing thread.
     */
    @Override
    public void onInstalled(BrokerCapabilities capabilities) {
        deferredDispatch.support(capabilities.deferredDispatch());
    }

    /**
     * Turns a {@code kpipe.*} switch on or off (see {@link RequestClassifier#switchOn}): requests read from now on are
     * classified with it. Thread: any.
     *
     * @param s the switch
     * @param pipelined whether what it covers may be pipelined
     */
    public void switchOn(PipelinedApi.Switch s, boolean pipelined) {
        classifier.switchOn(s, pipelined);
    }

    // ---------------------------------------------------------------- rounds (see Rounds)

    @Override
    public void onProcessorRound(NetworkProcessor<Q, S> processor) {
        rounds.run(processor);
    }

    // ---------------------------------------------------------------- responses (see ResponseSequencer)

    @Override
    public S onResponseReady(NetworkProcessor<Q, S> processor, S response) {
        return sequencer.dequeued(processor, response);
    }

    @Override
    public void onResponseWritten(NetworkProcessor<Q, S> processor, S response) {
        ConnectionPipeline<Q, S> conn = sequencer.completed(processor, response);
        if (conn != null) {
            deferredDispatch.responseWritten(processor, conn, response);
            throttles.responseWritten(conn, processor, response);
            conn.schedule();
        }
    }

    // ---------------------------------------------------------------- throttle windows, take-over, close

    @Override
    public void onThrottleStarted(NetworkProcessor<Q, S> processor, String connectionId) {
        ConnectionPipeline<Q, S> conn = connections.get(connectionId);
        if (conn != null) {
            throttles.started(conn);
            conn.schedule();
        }
    }

    @Override
    public void onThrottleEnded(NetworkProcessor<Q, S> processor, String connectionId) {
        ConnectionPipeline<Q, S> conn = connections.get(connectionId);
        if (conn != null) {
            throttles.ended(conn);
            conn.schedule();
        }
    }

    /** A classic connection whose upgrade the byte budget deferred is taken over, muted ({@link Ownership}). */
    @Override
    public boolean onUnmute(NetworkProcessor<Q, S> processor, String connectionId) {
        return ownership.takeOver(processor, connectionId);
    }

    /**
     * A request kpipe read ahead on a pipelined connection was refused by the broker (it does not parse, its API or
     * version is not supported). Stock Kafka would have met it only after answering every earlier request, then closed
     * the connection; so does kpipe: the connection stays muted, its earlier responses are written in order, then it
     * is closed ({@link Rounds}). A connection with nothing in flight is closed by the broker at once.
     */
    @Override
    public boolean onRequestRejected(NetworkProcessor<Q, S> processor, String connectionId) {
        return closeAfterDrain(connectionId, ConnectionEvent.REQUEST_REJECTED);
    }

    /**
     * The client's input ended on a pipelined connection: an end of stream (it closed its write side and reads on),
     * a frame the network layer refuses (size negative or above {@code socket.request.max.bytes}), a failed read.
     * Stock Kafka meets that only once it has answered every earlier request (it reads the next one only then), and
     * then closes; so does kpipe: nothing more is read, the connection stays muted, its earlier responses are written
     * in order, then it is closed ({@link Rounds}); a write that fails closes it at once, as on stock. A connection
     * with nothing in flight is closed by the broker at once (a draining connection, the only one that may hold a
     * request, is muted: the broker does not read it). Counted in {@code deferred-close-total}.
     */
    @Override
    public boolean onInputEnded(NetworkProcessor<Q, S> processor, String connectionId, Throwable cause) {
        return closeAfterDrain(connectionId, ConnectionEvent.INPUT_ENDED);
    }

    /**
     * @return true if the connection closes once its earlier responses are written (counted in
     *     {@code deferred-close-total}); false if kpipe does not own it or nothing is in flight (the broker closes it)
     */
    private boolean closeAfterDrain(String connectionId, ConnectionEvent event) {
        ConnectionPipeline<Q, S> conn = connections.get(connectionId);
        if (conn == null || conn.inflight().isEmpty()) {
            return false;
        }
        conn.transition(event);
        conn.muteAndSchedule();
        stats.deferredCloses.increment();
        return true;
    }

    @Override
    public void onConnectionClosed(NetworkProcessor<Q, S> processor, String connectionId) {
        ownership.closed(processor, connectionId);
    }
}
