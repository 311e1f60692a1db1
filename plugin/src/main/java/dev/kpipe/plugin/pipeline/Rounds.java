package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A processor round ({@code Processor.run}'s loop, {@code onProcessorRound}): the safe point at which kpipe evaluates
 * the connections whose situation changed, and applies their wait reasons ({@link WaitReason}: in the dispatch
 * phase, throttled, at a per-connection limit, storage pressure, no reservation of the byte budget) to Kafka's
 * channel, or completes their drain ({@link Drains}).
 *
 * <p>A round first takes the connections other threads signalled ({@link ProcessorPipelines#dispatched}), revokes
 * idle reservations ({@link Reservations#revokeIdle}), re-queues the connections waiting for a quiet period and, once
 * the storage side is clear again, those it kept muted; then it evaluates every queued connection once.
 *
 * <p>Invariants: the storage-side signal is read at most once per round, by the first evaluation that needs it, so
 * every connection of a round sees the same value; a connection is evaluated only at a round of its own processor, at most once per queueing
 * ({@link ConnectionPipeline#schedule}); a connection kpipe no longer owns is never muted or unmuted; a connection
 * kept muted only by the storage side is listed in {@link ProcessorPipelines#pressureBlocked}, so it is evaluated
 * again at every round until the signal clears. A throwable of an evaluation is counted ({@code plugin-fault-total})
 * and never leaves: {@link #recover} makes sure the connection cannot wedge.
 *
 * <p>Thread: the processor's network thread.
 */
final class Rounds {

    private static final Logger LOG = LoggerFactory.getLogger(Rounds.class);
    /** Faults that could repeat per request: WARN once each, then DEBUG (see {@link FaultLog}). */
    private final FaultLog evaluateFailed = new FaultLog(LOG);

    private final PipelineStats stats;
    private final DynamicSettings settings;
    private final StorageSignal signal;
    private final Reservations reservations;
    private final Drains drains;
    private final Drains.Release release;

    /**
     * @param stats where to count
     * @param settings the limits and {@code kpipe.enable} in force
     * @param signal the storage-side signal
     * @param reservations the byte-budget reservations
     * @param drains drain and hand-back
     * @param release forgets a connection kpipe owned
     */
    Rounds(
            PipelineStats stats,
            DynamicSettings settings,
            StorageSignal signal,
            Reservations reservations,
            Drains drains,
            Drains.Release release) {
        this.stats = stats;
        this.settings = settings;
        this.signal = signal;
        this.reservations = reservations;
        this.drains = drains;
        this.release = release;
    }

    /**
     * One round of the processor: evaluates every connection whose situation changed.
     *
     * @param processor the processor
     */
    void run(NetworkProcessor processor) {
        ProcessorPipelines p = ProcessorPipelines.of(processor);
        p.rounds++;
        p.roundSignal = StorageSignal.UNREAD;
        ConnectionPipeline conn;
        while ((conn = p.dispatched.poll()) != null) {
            conn.schedule();
        }
        if (!p.holders.isEmpty()) {
            reservations.revokeIdle(p.holders, p.rounds);
        }
        if (!p.awaitingQuiet.isEmpty()) {
            for (ConnectionPipeline c : p.awaitingQuiet) {
                c.schedule();
            }
            p.awaitingQuiet.clear();
        }
        if (!p.pressureBlocked.isEmpty() && signal(p) != StorageSignal.SATURATED) {
            for (ConnectionPipeline c : p.pressureBlocked) {
                c.pressureCleared();
            }
            p.pressureBlocked.clear();
        }
        ArrayList<ConnectionPipeline> pending = p.pending;
        // evaluate() may schedule again (not the same connection); index loop tolerates appends
        for (int i = 0; i < pending.size(); i++) {
            ConnectionPipeline c = pending.get(i);
            c.evaluating();
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

    /**
     * @param p the processor whose round runs
     * @return the storage-side signal, read once per round: the first call of a round reads it, the others reuse it
     */
    private int signal(ProcessorPipelines p) {
        int s = p.roundSignal;
        if (s == StorageSignal.UNREAD) {
            s = signal.read();
            p.roundSignal = s;
        }
        return s;
    }

    /**
     * After {@link #evaluate} threw: makes sure the connection cannot wedge. One that is muted with nothing in flight,
     * nothing held and no throttle window (nothing would evaluate it again) is handed back to Kafka, which reads its
     * next request classically; any other is evaluated again by its next completion, dispatch or throttle end.
     */
    private void recover(ConnectionPipeline c) {
        try {
            if (c.state() == ConnectionState.PIPELINED
                    && c.muted()
                    && c.inflight().isEmpty()
                    && !c.dispatch().active()
                    && !c.throttle().throttled()) {
                release.release(c, ConnectionEvent.HAND_BACK);
                // Kafka's channel is MUTED (kpipe muted it); unmuting leaves it NOT_MUTED, as after a response.
                c.unmute();
            }
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.warn("kpipe: failed to hand {} back to Kafka", c, e);
        }
    }

    /** Applies the connection's wait reasons, or completes its drain. Network thread, safe point. */
    private void evaluate(ConnectionPipeline conn) {
        ConnectionState state = conn.state();
        if (!state.owned()) {
            // Closed, or no longer kpipe's: a handler thread may queue a connection in dispatched
            // after it was handed back to Kafka (its dispatch phase was already ended).
            return;
        }
        if (state == ConnectionState.CLOSING_AFTER_DRAIN) {
            if (conn.inflight().isEmpty() && !conn.dispatch().active()) {
                conn.processor().processor.close(conn.id()); // onConnectionClosed follows
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
            int s = signal(conn.processor());
            if (s == StorageSignal.SATURATED) {
                reasons = WaitReason.STORAGE_PRESSURE.bit();
                conn.blockForPressure();
            } else if (s == StorageSignal.FAULT && !conn.inflight().isEmpty()) {
                // The back-pressure check failed: the connection reads its next request as a classic connection
                // would, once every earlier response is written (each completion evaluates it again).
                reasons = WaitReason.STORAGE_PRESSURE.bit();
            }
        }
        if (reasons == 0) {
            boolean waited = conn.reservation().waiting();
            if (!reservations.reserve(conn.reservation(), conn.largestRequest(), conn.processor().rounds)) {
                reasons = WaitReason.BUDGET.bit();
                if (!waited) {
                    stats.waitStarted(WaitReason.BUDGET);
                }
            }
        }
        if (reasons == 0) {
            conn.unmute();
        } else {
            conn.mute();
        }
    }
}
