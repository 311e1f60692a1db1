// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Ticker;

/**
 * The re-authentication quiet period: how long a connection must have written nothing before a SASL
 * re-authentication (KIP-368) kpipe holds begins, {@link #NANOS}. The Java client (kafka-clients {@code Selector})
 * reads one message per poll while it re-authenticates, and over TLS, once its socket is empty, it does not poll
 * again at once for messages left decrypted in its buffers ({@code madeReadProgressLastPoll} is set only by
 * {@code attemptRead}): if the handshake response arrives in one read together with an earlier response, the client
 * stalls until its poll times out (measured: about 200 ms under load; up to {@code request.timeout.ms} on an idle
 * producer, which then drops the connection). Written apart from the earlier responses, the handshake response
 * arrives in a read of its own and wakes the client. A heuristic: a client paused for longer (GC) can still read both
 * at once, as it can with stock Kafka, which writes the handshake response right after the last earlier response.
 * Costs the client up to this long once per session ({@code connections.max.reauth.ms}); the processor is woken when
 * it ends, by the timer passed in.
 *
 * <p>Invariant: a connection waiting for its quiet period is listed with its processor
 * ({@link ConnectionPipeline#quietWaitStarted}: evaluated again at the next round) and has asked for at most one
 * wake-up. Thread: the network thread.
 */
final class QuietPeriod {

    /** The quiet period: 100 ms. */
    static final long NANOS = 100_000_000L;

    private final Ticker ticker;
    private final WakeupTimer timer;

    /**
     * @param ticker the clock
     * @param timer wakes the processor when a quiet period ends
     */
    QuietPeriod(Ticker ticker, WakeupTimer timer) {
        this.ticker = ticker;
        this.timer = timer;
    }

    /**
     * @param conn a connection
     * @return true if it has written nothing for the quiet period
     */
    boolean over(ConnectionPipeline<?, ?> conn) {
        return ticker.nanos() - conn.lastWrittenNanos() >= NANOS;
    }

    /**
     * Keeps the connection waiting for the end of its quiet period, if it has not ended.
     *
     * @param conn a connection whose held re-authentication could begin now
     * @return true if it must wait (it is evaluated again at the round after the wake-up); false if the period is over
     */
    <Q, S> boolean await(ConnectionPipeline<Q, S> conn) {
        long quietFor = ticker.nanos() - conn.lastWrittenNanos();
        if (quietFor >= NANOS) {
            return false;
        }
        if (conn.quietWaitStarted()) {
            timer.wakeup(conn.processor(), NANOS - quietFor);
        }
        return true;
    }
}
