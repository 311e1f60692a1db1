package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.spi.MuteEvent;
import dev.kpipe.spi.NetworkProcessor;

/**
 * Drain and hand-back: a connection in one of the draining states ({@link ConnectionState#draining()}) stays muted
 * until every earlier response is written, no throttle window is open and no request is in the dispatch phase (and,
 * for a held re-authentication, its {@link QuietPeriod} is over); then Kafka takes it back (downgrade) in the state
 * Kafka expects.
 *
 * <p>Invariant: a drain ends exactly once, in {@link #handBack}, which moves the connection to
 * {@link ConnectionState#HANDED_BACK} before any broker call, so a broker call that throws cannot leave kpipe owning a
 * connection Kafka already has. Thread: the connection's network thread.
 */
final class Drains {

    /** Forgets a connection kpipe owned ({@link Ownership#release}). */
    @FunctionalInterface
    interface Release {
        void release(ConnectionPipeline conn, ConnectionEvent event);
    }

    private final PipelineStats stats;
    private final Ticker ticker;
    private final Reservations reservations;
    private final QuietPeriod quiet;
    private final Release release;

    Drains(PipelineStats stats, Ticker ticker, Reservations reservations, QuietPeriod quiet, Release release) {
        this.stats = stats;
        this.ticker = ticker;
        this.reservations = reservations;
        this.quiet = quiet;
        this.release = release;
    }

    /**
     * {@code kpipe.enable} is false: a pipelined connection drains with no request held; nothing more is read until
     * Kafka has it back (PIPELINED to DRAINING_DISABLED).
     *
     * @param conn a PIPELINED connection
     */
    void startDisabledDrain(ConnectionPipeline conn) {
        reservations.release(conn.reservation);
        conn.transition(ConnectionEvent.DISABLED);
        conn.drainStartNanos = ticker.nanos();
        stats.drains.increment();
    }

    /**
     * Completes the drain if nothing is outstanding any more, else keeps the connection muted.
     *
     * @param conn a draining connection
     * @param processor its processor
     */
    void evaluate(ConnectionPipeline conn, NetworkProcessor processor) {
        if (conn.slots.isEmpty() && !conn.throttle.throttled() && conn.awaitingDispatch == null) {
            if (conn.state() == ConnectionState.DRAINING_REAUTHENTICATION && quiet.await(conn, processor)) {
                return;
            }
            handBack(conn, processor);
        } else if (!conn.muted) {
            conn.muted = true;
            processor.mute(conn.id);
        }
    }

    /**
     * Downgrade: Kafka takes the connection back, as if it had just read the held request; or, with no held request
     * (kpipe was disabled), idle and readable; or, for a held re-authentication, as Kafka leaves a connection after
     * writing its last response (unmuted), and the re-authentication begins.
     */
    private void handBack(ConnectionPipeline conn, NetworkProcessor processor) {
        ConnectionState drained = conn.state();
        Object held = conn.held;
        conn.held = null;
        stats.drainTimeNanos.add(ticker.nanos() - conn.drainStartNanos);
        release.release(conn, ConnectionEvent.HAND_BACK);
        stats.downgrades.increment();
        switch (drained) {
            case DRAINING_REAUTHENTICATION:
                stats.heldRequests.decrementAndGet();
                // The channel is MUTED (kpipe muted it when the handshake was read); Kafka read the handshake unmuted.
                try {
                    processor.unmute(conn.id);
                } finally {
                    processor.beginReauthentication(conn.id, held);
                }
                return;
            case DRAINING_EXCLUSIVE:
                stats.heldRequests.decrementAndGet();
                // The channel is MUTED (muted when the held request was read, never unmuted since).
                try {
                    processor.deliverMuteEvent(conn.id, MuteEvent.REQUEST_RECEIVED);
                } finally {
                    processor.forward(held);
                }
                return;
            default:
                // DRAINING_DISABLED. The channel is MUTED (kpipe muted it) or NOT_MUTED, with no response pending:
                // Kafka's state for an idle connection once it is readable again.
                if (conn.muted) {
                    conn.muted = false;
                    processor.unmute(conn.id);
                }
        }
    }
}
