package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.spi.NetworkProcessor;
import java.util.function.BooleanSupplier;

/**
 * Where kpipe starts and stops owning a connection, besides the upgrade by a request read ({@link Admissions}): the
 * take-over of a classic connection whose upgrade the byte budget deferred ({@link #takeOver}), and letting go,
 * because Kafka owns the connection again (hand-back) or it closed ({@link #release}, {@link #closed}).
 *
 * <p>Invariants: a connection is in the coordinator's table exactly while kpipe owns it, and counted in
 * {@code pipelined-connections} exactly then; letting go of it gives back, once, everything it holds: its
 * reservation or place in the budget's queue, each slot's permit, its throttle windows (counted), its held request
 * (queued on close, as stock Kafka would have, except a held re-authentication, dropped with the connection).
 *
 * <p>Thread: the connection's network thread.
 */
final class Ownership {

    private final ConnectionTable connections;
    private final PipelineStats stats;
    private final Ticker ticker;
    private final ByteBudget budget;
    private final Reservations reservations;
    private final Throttles throttles;
    private final BooleanSupplier enabled;

    Ownership(
            ConnectionTable connections,
            PipelineStats stats,
            Ticker ticker,
            ByteBudget budget,
            Reservations reservations,
            Throttles throttles,
            BooleanSupplier enabled) {
        this.connections = connections;
        this.stats = stats;
        this.ticker = ticker;
        this.budget = budget;
        this.reservations = reservations;
        this.throttles = throttles;
        this.enabled = enabled;
    }

    /**
     * Forgets a connection: Kafka owns it again (downgrade, {@link ConnectionEvent#HAND_BACK}, legal from PIPELINED
     * and the draining states, which every caller checks) or it is closed ({@link ConnectionEvent#CLOSE}).
     *
     * @param conn the connection
     * @param event {@link ConnectionEvent#HAND_BACK} or {@link ConnectionEvent#CLOSE}
     */
    void release(ConnectionPipeline conn, ConnectionEvent event) {
        conn.transition(event);
        if (connections.remove(conn)) {
            throttles.forget(conn);
            reservations.release(conn.reservation());
            // each request's permit, once (none when handed back: a hand-back waits for every response)
            conn.inflight().releaseAll(budget);
            ProcessorPipelines p = conn.processor();
            if (p.lastCompleted == conn) {
                p.lastCompleted = null;
            }
        }
    }

    /**
     * Kafka is about to unmute a classic connection ({@code onTryUnmute}) whose upgrade the byte budget deferred: the
     * response of the request that would have upgraded it is written, and Kafka's channel is MUTED (no throttle:
     * THROTTLE_STARTED cancels the take-over), as after any read. kpipe takes the connection over with nothing in
     * flight, keeps it muted and unmutes it once it holds budget.
     *
     * @param processor the connection's processor
     * @param connectionId the connection
     * @return true if kpipe took it over (Kafka must not unmute it); false if it stays Kafka's
     */
    boolean takeOver(NetworkProcessor processor, String connectionId) {
        Object attachment = processor.attachment();
        if (attachment == null) {
            return false;
        }
        ProcessorPipelines p = (ProcessorPipelines) attachment;
        Integer deferred = p.upgradesDeferred.isEmpty() ? null : p.upgradesDeferred.remove(connectionId);
        if (deferred == null || !enabled.getAsBoolean()) {
            return false; // disabled since the upgrade was deferred: the connection stays Kafka's
        }
        // Kafka's channel is MUTED, as after any read: so is a new connection's view of it
        ConnectionPipeline conn = new ConnectionPipeline(connectionId, p, stats, ticker, deferred);
        connections.add(conn);
        conn.schedule();
        processor.wakeup();
        return true;
    }

    /**
     * The connection closed ({@code onConnectionClosed}): kpipe lets go of it, discards the responses it holds, and
     * queues a held exclusive request (stock Kafka would have queued it as soon as it was read).
     *
     * @param processor the connection's processor
     * @param connectionId the connection
     */
    void closed(NetworkProcessor processor, String connectionId) {
        ConnectionPipeline conn = connections.get(connectionId);
        if (conn == null) {
            Object attachment = processor.attachment();
            if (attachment != null) {
                ((ProcessorPipelines) attachment).upgradesDeferred.remove(connectionId);
            }
            return;
        }
        ConnectionState was = conn.state();
        Object held = conn.takeHeld();
        conn.inflight().discardResponses(conn.processor().ready, processor);
        release(conn, ConnectionEvent.CLOSE);
        if (held != null && was != ConnectionState.DRAINING_REAUTHENTICATION) {
            // Stock Kafka would have queued it as soon as it was read; so does kpipe, now. (A held re-authentication
            // is dropped: the connection is gone, nothing to re-authenticate.)
            processor.forward(held);
        }
    }
}
