// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;

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
final class Drains<Q, S> {

    /** Forgets a connection kpipe owned ({@link Ownership#release}). */
    @FunctionalInterface
    interface Release<Q, S> {
        void release(ConnectionPipeline<Q, S> conn, ConnectionEvent event);
    }

    private final Reservations reservations;
    private final QuietPeriod quiet;
    private final Release<Q, S> release;

    Drains(Reservations reservations, QuietPeriod quiet, Release<Q, S> release) {
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
    void startDisabledDrain(ConnectionPipeline<Q, S> conn) {
        conn.disabled(reservations);
    }

    /**
     * Completes the drain if nothing is outstanding any more, else keeps the connection muted.
     *
     * @param conn a draining connection
     */
    void evaluate(ConnectionPipeline<Q, S> conn) {
        if (conn.nothingOutstanding()) {
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
    private void handBack(ConnectionPipeline<Q, S> conn) {
        NetworkProcessor<Q, S> processor = conn.processor();
        ConnectionState drained = conn.state();
        Q heldRequest = conn.takeHeldRequest();
        Reauthentication heldReauthentication = conn.takeHeldReauthentication();
        release.release(conn, ConnectionEvent.HAND_BACK);
        switch (drained) {
            case DRAINING_REAUTHENTICATION:
                // As Kafka leaves a connection after writing its last response (unmuted); then it begins.
                try {
                    processor.handBack(conn.id(), null);
                } finally {
                    processor.beginReauthentication(conn.id(), heldReauthentication);
                }
                return;
            case DRAINING_EXCLUSIVE:
                // As Kafka leaves a connection right after reading the held request, which it queues.
                processor.handBack(conn.id(), heldRequest);
                return;
            default:
                // DRAINING_DISABLED: idle and readable.
                processor.handBack(conn.id(), null);
        }
    }
}
