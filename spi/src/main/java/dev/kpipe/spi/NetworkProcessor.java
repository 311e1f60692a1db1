// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

import org.apache.kafka.common.requests.RequestContext;

/**
 * What one broker network processor offers a plugin: actions on the connections it serves, and the accessors of the
 * broker's opaque requests and responses.
 *
 * <p>Threads: every action must be called on this processor's own network thread (the network layer's selector is not
 * thread-safe); {@link #wakeup()}, {@link #listenerName()}, {@link #id()} and the accessors ({@link #contextOf},
 * {@link #requestOf}, {@link #kindOf}) may be called from any thread.
 *
 * @param <Q> the broker's request type
 * @param <S> the broker's response type
 */
public interface NetworkProcessor<Q, S> {

    /** @return the listener this processor serves, e.g. {@code PLAINTEXT}; thread: any */
    String listenerName();

    /**
     * @return the processor id ({@code Processor.id}: Kafka's {@code SocketServer} numbers its processors from 0 with one
     *     counter per broker, a new id for each processor a reconfiguration adds); thread: any
     */
    int id();

    /**
     * Stops reading a connection the plugin owns: nothing more is read from it until {@link #unmute}. No-op for a
     * connection that is not open.
     *
     * @param connectionId the connection ({@code RequestContext.connectionId})
     */
    void mute(String connectionId);

    /**
     * Reads a connection the plugin owns again. No-op for a connection that is not open.
     *
     * @param connectionId the connection
     */
    void unmute(String connectionId);

    /**
     * @param connectionId the connection
     * @return true while it is open or closing
     */
    boolean isOpen(String connectionId);

    /**
     * Queues a request the plugin held ({@link Admission#HELD}) for the request handlers, exactly as the broker would
     * have queued it when it read it. The listener is not told about it again.
     *
     * @param request the held request
     */
    void release(Q request);

    /**
     * Gives a connection the plugin owns back to the broker. With {@code heldRequest}: as the broker leaves a
     * connection right after reading that request (muted until its response is written), and the request is queued;
     * without: as after writing a response (nothing outstanding, readable). Every earlier response of the connection
     * must have been written and no throttle window be open. From now on the broker mutes and unmutes it itself.
     *
     * @param connectionId the connection
     * @param heldRequest the request the plugin held for the hand-back, or {@code null}
     */
    void handBack(String connectionId, Q heldRequest);

    /**
     * Begins a re-authentication the plugin deferred ({@link NetworkEventListener#onReauthentication}), exactly as the
     * broker would have begun it: the broker answers the client's handshake at once. If beginning fails the connection
     * is closed as the broker closes one on an error. No-op if the connection closed meanwhile.
     *
     * @param connectionId the connection
     * @param reauthentication the handle the broker gave
     */
    void beginReauthentication(String connectionId, Reauthentication reauthentication);

    /**
     * Closes the connection as the broker closes one itself (the connection quota and disconnect listeners are told,
     * a response being written is completed); {@link NetworkEventListener#onConnectionClosed} follows. No-op for a
     * connection that is not open.
     *
     * @param connectionId the connection
     */
    void close(String connectionId);

    /**
     * Takes the next response from this processor's response queue without telling the listener.
     *
     * @return a response, or {@code null} if the queue is empty
     */
    S pollResponse();

    /**
     * Completes, without writing it, a response of a connection that closed, as the broker does for such a response
     * (its request metrics are updated).
     *
     * @param response the response
     */
    void discard(S response);

    /** Wakes the processor so that it runs a round promptly. Thread: any. */
    void wakeup();

    /**
     * Whether responses wait in this processor's response queue (Kafka's {@code Processor.responseQueue}, which {@code
     * RequestChannel.sendResponse} fills and wakes the processor for). The processor takes every one of them in a
     * round, and {@link NetworkEventListener#onProcessorRound} follows that round, provided the listener's {@code
     * onResponseReady} answers {@code null} only once the queue is empty (it may take the queued ones itself with
     * {@link #pollResponse}): a plugin that hands news to the processor's thread and sees {@code true} after handing it
     * over need not {@link #wakeup()} it as well. Thread: any.
     *
     * @return true if a response is queued and not yet taken; false if none is, or the broker does not tell (then a
     *     plugin wakes the processor)
     */
    default boolean responsesQueued() {
        return false;
    }

    /**
     * @param response a response
     * @return its kind; thread: any
     */
    ResponseKind kindOf(S response);

    /**
     * @param response a response
     * @return the request it answers; thread: any
     */
    Q requestOf(S response);

    /**
     * @param request a request
     * @return its context (header, connection id, principal, listener); thread: any
     */
    RequestContext contextOf(Q request);
}
