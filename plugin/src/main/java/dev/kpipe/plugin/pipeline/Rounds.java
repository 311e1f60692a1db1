// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.spi.NetworkProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A processor round ({@code Processor.run}'s loop, {@code onProcessorRound}): the safe point at which kpipe evaluates
 * the connections whose situation changed, and applies their wait reasons ({@link WaitReason}: in the dispatch
 * phase, throttled, at a per-connection limit, undrained, storage pressure, no reservation of the byte budget) to
 * Kafka's channel, or completes their drain ({@link Drains}).
 *
 * <p>A round first takes the connections other threads signalled ({@link ProcessorPipelines#roundStarted}), revokes
 * idle reservations ({@link Reservations#revokeIdle}), re-queues the connections waiting for a quiet period and, once
 * the storage side is clear again, those it kept muted; then it evaluates every queued connection once.
 *
 * <p>Invariants: the storage-side signal is read at most once per round, by the first evaluation that needs it, so
 * every connection of a round sees the same value; a connection is evaluated only at a round of its own processor, at
 * most once per queueing ({@link ConnectionPipeline#schedule}); a connection kpipe no longer owns is never muted or
 * unmuted; a connection kept muted only by the storage side is listed with its processor ({@link
 * ProcessorPipelines#pressureRechecked}), so it is evaluated again at every round until the signal clears. A throwable
 * of an evaluation is counted ({@code plugin-fault-total}) and never leaves: {@link #recover} makes sure the connection
 * cannot wedge.
 *
 * <p>Thread: the processor's network thread.
 */
final class Rounds<Q, S> {

    private static final Logger LOG = LoggerFactory.getLogger(Rounds.class);
    /** Faults that could repeat per request: WARN once each, then DEBUG (see {@link FaultLog}). */
    private final FaultLog evaluateFailed = new FaultLog(LOG);

    private final ProcessorTable<Q, S> processors;
    private final PipelineStats stats;
    private final DynamicSettings settings;
    private final StorageSignal signal;
    private final Reservations reservations;
    private final Drains<Q, S> drains;
    private final Drains.Release<Q, S> release;
    private final Ticker ticker;
    /** Resolves the topics connections keep ({@code RequestClassifier.topicName}). */
    private final java.util.function.Function<Object, String> topicNames;

    /** Without a wake-up from the storage source, connections waiting on a topic are evaluated again this often. */
    static final long PRESSURE_RECHECK_NANOS = 100_000_000L;

    /**
     * @param stats where to count
     * @param settings the limits and {@code kpipe.enable} in force
     * @param signal the storage-side signal
     * @param reservations the byte-budget reservations
     * @param drains drain and hand-back
     * @param release forgets a connection kpipe owned
     * @param ticker the coordinator's clock
     * @param topicNames resolves the topics connections keep for the per-topic pressure check
     */
    Rounds(
            ProcessorTable<Q, S> processors,
            PipelineStats stats,
            DynamicSettings settings,
            StorageSignal signal,
            Reservations reservations,
            Drains<Q, S> drains,
            Drains.Release<Q, S> release,
            Ticker ticker,
            java.util.function.Function<Object, String> topicNames) {
        this.processors = processors;
        this.stats = stats;
        this.settings = settings;
        this.signal = signal;
        this.reservations = reservations;
        this.drains = drains;
        this.release = release;
        this.ticker = ticker;
        this.topicNames = topicNames;
    }

    /**
     * One round of the processor: evaluates every connection whose situation changed.
     *
     * @param processor the processor
     */
    void run(NetworkProcessor<Q, S> processor) {
        ProcessorPipelines<Q, S> p = processors.of(processor);
        p.roundStarted(reservations);
        if (p.pressureWaits() && pressureMayHaveCleared(p)) {
            p.pressureRechecked(signal.clears(), ticker.nanos());
        }
        // evaluate() may schedule again (not the same connection); index loop tolerates appends
        for (int i = 0; i < p.pendingCount(); i++) {
            ConnectionPipeline<Q, S> c = p.pending(i);
            c.evaluationStarted();
            try {
                evaluate(p, c);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                stats.pluginFaults.increment();
                evaluateFailed.fault("kpipe: failed to evaluate {}", c, e);
                recover(c);
            }
        }
        p.roundEnded();
    }

    /**
     * @return true if the storage pressure that keeps some of this processor's connections waiting may have cleared:
     *     the broker-wide signal is clear and either a connection waited on it, or no topic is saturated, or the source
     *     reported a clear since they were last evaluated, or {@link #PRESSURE_RECHECK_NANOS} passed since (a source
     *     that does not report clears). O(1): the waiting connections are not looked at.
     */
    private boolean pressureMayHaveCleared(ProcessorPipelines<Q, S> p) {
        if (p.roundSignal(signal) == StorageSignal.SATURATED) {
            return false;
        }
        return p.blockedGlobally()
                || p.roundTopicSignal(signal) != StorageSignal.SATURATED
                || signal.clears() != p.pressureCheckedClears()
                || ticker.nanos() - p.pressureCheckedNanos() >= PRESSURE_RECHECK_NANOS;
    }

    /**
     * After {@link #evaluate} threw: makes sure the connection cannot wedge. One that is muted with nothing in flight,
     * nothing held and no throttle window (nothing would evaluate it again) is handed back to Kafka, which reads its
     * next request classically; any other is evaluated again by its next completion, dispatch or throttle end.
     */
    private void recover(ConnectionPipeline<Q, S> c) {
        try {
            if (c.state() == ConnectionState.PIPELINED && c.muted() && c.nothingOutstanding()) {
                release.release(c, ConnectionEvent.HAND_BACK);
                // Kafka's channel is MUTED (kpipe muted it): given back idle and readable, as after a response.
                c.processor().handBack(c.id(), null);
            }
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.warn("kpipe: failed to hand {} back to Kafka", c, e);
        }
    }

    /** Applies the connection's wait reasons, or completes its drain. Network thread, safe point. */
    private void evaluate(ProcessorPipelines<Q, S> p, ConnectionPipeline<Q, S> conn) {
        ConnectionState state = conn.state();
        if (!state.owned()) {
            // Closed, or no longer kpipe's: a handler thread may queue a connection in dispatched
            // after it was handed back to Kafka (its dispatch phase was already ended).
            conn.pressureWaitEnded();
            return;
        }
        if (state == ConnectionState.CLOSING_AFTER_DRAIN) {
            if (conn.inflight().isEmpty() && !conn.awaitingDispatch()) {
                conn.processor().close(conn.id()); // onConnectionClosed follows
            } else {
                conn.mute();
            }
            return;
        }
        if (!settings.enabled() && state == ConnectionState.PIPELINED) {
            drains.startDisabledDrain(conn);
            state = ConnectionState.DRAINING_DISABLED;
        }
        if (state.draining()) {
            drains.evaluate(conn);
            return;
        }
        int reasons = conn.muteReasons(settings.limits());
        if (reasons == 0) {
            reasons = storagePressure(p, conn);
        }
        if (reasons == 0 && !conn.reserveNextRead(reservations)) {
            reasons = WaitReason.BUDGET.bit();
        }
        if (reasons == 0) {
            conn.unmute();
        } else {
            conn.mute();
        }
    }

    /**
     * @return {@link WaitReason#STORAGE_PRESSURE}'s bit if the storage side keeps the connection waiting now (it is
     *     then listed, and its processor woken when pressure clears), else 0. A source that throws makes the connection
     *     read its next request as a classic connection would, once every earlier response is written (each completion
     *     evaluates it again).
     */
    private int storagePressure(ProcessorPipelines<Q, S> p, ConnectionPipeline<Q, S> conn) {
        int s = p.roundSignal(signal);
        boolean global = s == StorageSignal.SATURATED;
        Object[] topics = conn.produceTopics();
        if (s == StorageSignal.CLEAR && topics != null) {
            s = p.roundTopicSignal(signal);
            if (s == StorageSignal.SATURATED) {
                s = signal.saturated(topics, topicNames);
            }
        }
        if (s == StorageSignal.SATURATED) {
            if (conn.pressureWaitStarted(global)) {
                signal.waiting(conn.processor());
            }
            return WaitReason.STORAGE_PRESSURE.bit();
        }
        conn.pressureWaitEnded();
        return s == StorageSignal.FAULT && !conn.inflight().isEmpty() ? WaitReason.STORAGE_PRESSURE.bit() : 0;
    }
}
