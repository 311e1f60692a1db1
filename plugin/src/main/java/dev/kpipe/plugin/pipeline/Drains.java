package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
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

    private final Reservations reservations;
    private final QuietPeriod quiet;
    private final Release release;

    Drains(Reservations reservations, QuietPeriod quiet, Release release) {
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
        reservations.release(conn.reservation());
        conn.transition(ConnectionEvent.DISABLED);
    }

    /**
     * Completes the drain if nothing is outstanding any more, else keeps the connection muted.
     *
     * @param conn a draining connection
     */
    void evaluate(ConnectionPipeline conn) {
        if (conn.inflight().isEmpty()
                && !conn.throttle().throttled()
                && !conn.dispatch().active()) {
            if (conn.state() == ConnectionState.DRAINING_REAUTHENTICATION && quiet.await(conn)) {
                return;
            }
            handBack(conn);
        } else {
            conn.mute();
        }
    }

    /**
     * Downgrade: Kafka takes the connection back, as if it had just read the held request; or, with no held request
     * (kpipe was disabled), idle and readable; or, for a held re-authentication, as Kafka leaves a connection after
     * writing its last response (unmuted), and the re-authentication begins.
     */
    private void handBack(ConnectionPipeline conn) {
        NetworkProcessor processor = conn.processor().processor;
        ConnectionState drained = conn.state();
        Object held = conn.takeHeld();
        release.release(conn, ConnectionEvent.HAND_BACK);
        switch (drained) {
            case DRAINING_REAUTHENTICATION:
                // The channel is MUTED (kpipe muted it when the handshake was read); Kafka read the handshake unmuted.
                try {
                    conn.unmute();
                } finally {
                    processor.beginReauthentication(conn.id(), held);
                }
                return;
            case DRAINING_EXCLUSIVE:
                // The channel is MUTED (muted when the held request was read, never unmuted since).
                try {
                    processor.deliverMuteEvent(conn.id(), MuteEvent.REQUEST_RECEIVED);
                } finally {
                    processor.forward(held);
                }
                return;
            default:
                // DRAINING_DISABLED. The channel is MUTED (kpipe muted it) or NOT_MUTED, with no response pending:
                // Kafka's state for an idle connection once it is readable again.
                conn.unmute();
        }
    }
}
