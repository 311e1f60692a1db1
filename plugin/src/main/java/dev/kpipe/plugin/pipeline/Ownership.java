// SPDX-License-Identifier: Apache-2.0
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
final class Ownership<Q, S> {

    private final ProcessorTable<Q, S> processors;
    private final ConnectionTable<Q, S> connections;
    private final PipelineStats stats;
    private final Ticker ticker;
    private final ByteBudget budget;
    private final Reservations reservations;
    private final Throttles throttles;
    private final BooleanSupplier enabled;

    Ownership(
            ProcessorTable<Q, S> processors,
            ConnectionTable<Q, S> connections,
            PipelineStats stats,
            Ticker ticker,
            ByteBudget budget,
            Reservations reservations,
            Throttles throttles,
            BooleanSupplier enabled) {
        this.processors = processors;
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
    void release(ConnectionPipeline<Q, S> conn, ConnectionEvent event) {
        conn.transition(event);
        if (connections.remove(conn)) {
            // its reservation and each request's permit, once (none when handed back: that waits for every response)
            throttles.forgotten(conn, conn.released(reservations, budget));
        }
    }

    /**
     * Kafka is about to unmute a connection it owns ({@code onUnmute}): if kpipe deferred its upgrade because the byte
     * budget had no room, the response of the request that would have upgraded it is written now and Kafka's channel
     * is MUTED with no throttle window open, as after any read. kpipe takes the connection over with nothing in
     * flight, keeps it muted and unmutes it once it holds budget.
     *
     * @param processor the connection's processor
     * @param connectionId the connection
     * @return true if kpipe takes it over (Kafka must not unmute it); false if it stays Kafka's
     */
    boolean takeOver(NetworkProcessor<Q, S> processor, String connectionId) {
        ProcessorPipelines<Q, S> p = processors.peek(processor);
        if (p == null) {
            return false;
        }
        Integer deferred = p.takeDeferredUpgrade(connectionId);
        if (deferred == null || !enabled.getAsBoolean()) {
            return false; // disabled since the upgrade was deferred: the connection stays Kafka's
        }
        // Kafka's channel is MUTED, as after any read: so is a new connection's view of it
        ConnectionPipeline<Q, S> conn = new ConnectionPipeline<>(connectionId, p, stats, ticker, deferred);
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
    void closed(NetworkProcessor<Q, S> processor, String connectionId) {
        ConnectionPipeline<Q, S> conn = connections.get(connectionId);
        if (conn == null) {
            ProcessorPipelines<Q, S> p = processors.peek(processor);
            if (p != null) {
                p.takeDeferredUpgrade(connectionId);
            }
            return;
        }
        Q heldRequest = conn.closed(); // a held re-authentication is dropped: nothing to re-authenticate
        release(conn, ConnectionEvent.CLOSE);
        if (heldRequest != null) {
            // Stock Kafka would have queued it as soon as it was read; so does kpipe, now.
            processor.release(heldRequest);
        }
    }
}
