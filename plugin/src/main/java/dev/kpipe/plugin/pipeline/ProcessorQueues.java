// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservation;
import dev.kpipe.spi.NetworkProcessor;

/**
 * What one connection tells its processor ({@link ProcessorPipelines} implements it): the connection ({@code C}) joins
 * one of the processor's queues, and the processor moves its own fields. Generic in the connection's type so that the
 * connection and its processor do not name each other both ways.
 *
 * <p>Thread: the processor's network thread, except {@link #signalled} (any thread).
 */
interface ProcessorQueues<Q, S, C> {

    /** @return the broker's processor the connection belongs to */
    NetworkProcessor<Q, S> processor();

    /** @return the processor rounds seen so far (the round a reservation is taken at) */
    long round();

    /** @param conn a connection to evaluate at the processor's next round (listed once by the caller) */
    void scheduled(C conn);

    /**
     * @param conn a connection another thread changed (budget admitted, kpipe disabled); thread: any
     * @param wake whether to wake the processor now
     */
    void signalled(C conn, boolean wake);

    /**
     * @param conn a connection whose request's dispatch ended on another thread; thread: any
     * @return true if the processor was woken for it: only if no round is due anyway (a response in its queue,
     *     {@code NetworkProcessor.responsesQueued})
     */
    boolean dispatchSignalled(C conn);

    /** @param conn a connection whose held re-authentication waits for its quiet period: evaluated next round */
    void quietWaitStarted(C conn);

    /**
     * @param conn a connection the storage side keeps muted
     * @param listed true if it started waiting now (it is listed), false if it was already
     * @param global true if the broker-wide signal (not a topic's) keeps it waiting
     */
    void pressureWaitStarted(C conn, boolean listed, boolean global);

    /** A connection the storage side kept muted is released: the list is pruned at the round's end. */
    void pressureWaitEnded();

    /** @param response a held response whose turn came: the broker processes it before anything else queued */
    void responseReleased(S response);

    /**
     * @param response a response of a connection that closed
     * @return true if it was released and not yet processed (now withdrawn)
     */
    boolean releasedResponseWithdrawn(S response);

    /**
     * @param holder the connection
     * @return its reservation of the byte budget, listed with this processor's holders while it holds bytes
     */
    Reservation newReservation(Reservation.Holder holder);
}
