package dev.kpipe.spi;

import org.apache.kafka.common.requests.RequestContext;

/**
 * The actions one broker network processor ({@code kafka.network.Processor}) offers a plugin, and
 * the accessors for the opaque request and response handles it passes to
 * {@link NetworkEventListener}.
 *
 * <p>Threads: every method must be called on this processor's own network thread, except
 * {@link #wakeup()}, {@link #listenerName()}, {@link #id()}, {@link #contextOf(Object)} and the
 * response accessors, which any thread may call. The network layer's selector is not thread-safe.
 */
public interface NetworkProcessor {

    /** @return the listener this processor serves, e.g. {@code PLAINTEXT}; thread: any */
    String listenerName();

    /** @return the processor id, unique within its listener's socket server; thread: any */
    int id();

    /**
     * Mutes the connection: the selector reads nothing more from it. Mirrors
     * {@code Selector.mute}. No-op for a connection that is not open.
     *
     * @param connectionId the connection id ({@code RequestContext.connectionId})
     */
    void mute(String connectionId);

    /**
     * Unmutes the connection so the selector reads its next request. Mirrors
     * {@code Selector.unmute}: only a connection in Kafka's {@code MUTED} state is unmuted. No-op
     * for a connection that is not open.
     *
     * @param connectionId the connection id
     */
    void unmute(String connectionId);

    /**
     * @param connectionId the connection id
     * @return true while the connection is open or closing in the selector
     */
    boolean isOpen(String connectionId);

    /**
     * Hands a request held by {@link Admission#HELD} to the request channel (the handler queue),
     * exactly as the broker would have queued it. The listener is not called again for it.
     *
     * @param request the held request handle
     */
    void forward(Object request);

    /**
     * Begins a re-authentication the plugin took over in {@link NetworkEventListener#onReauthentication}, exactly as
     * the broker would have begun it when it read the {@code SASL_HANDSHAKE} ({@code
     * KafkaChannel.maybeBeginServerReauthentication} with the handshake and the processor's clock): the broker's
     * authenticator answers the handshake at once. The connection must be in the state the broker leaves it in
     * after writing a response: unmuted, no response in progress. If beginning fails, the connection is closed as
     * {@code Processor.processCompletedReceives} closes it on an exception (error logged, connection quota
     * released). No-op if the connection was closed meanwhile. Server-side re-authentication is KIP-368
     * ({@code connections.max.reauth.ms}). Thread: this processor's network thread only.
     *
     * @param connectionId the connection id
     * @param reauthentication the handle given to {@link NetworkEventListener#onReauthentication}
     */
    void beginReauthentication(String connectionId, Object reauthentication);

    /**
     * Feeds one event to the broker's own mute state machine for the connection (used to hand a
     * connection back to classic handling in a legal state).
     *
     * @param connectionId the connection id
     * @param event the event
     * @throws IllegalStateException if the event is not a legal transition from the channel's state
     */
    void deliverMuteEvent(String connectionId, MuteEvent event);

    /**
     * Closes the connection as the broker closes one itself ({@code Processor.close}: the selector closes the channel,
     * the connection quota and disconnect listeners are told, a response in flight is completed);
     * {@link NetworkEventListener#onConnectionClosed} follows. No-op for a connection that is not open. Used to finish
     * a close taken over with {@link NetworkEventListener#onRequestRejected}.
     *
     * @param connectionId the connection id
     */
    void close(String connectionId);

    /**
     * Takes the next entry from this processor's response queue without consulting the listener.
     *
     * @return a response handle, or {@code null} if the queue is empty
     */
    Object pollResponse();

    /**
     * Completes a response of a connection that is already closed without sending it, as the
     * broker does for a response whose connection is gone (request metrics are updated).
     *
     * @param response the response handle
     */
    void discard(Object response);

    /**
     * Attaches one plugin object to this processor, like {@code SelectionKey.attach}.
     *
     * @param attachment the object, or {@code null}
     */
    void attach(Object attachment);

    /** @return the object last given to {@link #attach}, or {@code null} */
    Object attachment();

    /** Wakes the processor's selector so that it runs a round promptly. Thread: any. */
    void wakeup();

    /**
     * @param response a response handle
     * @return its kind; thread: any
     */
    ResponseKind kindOf(Object response);

    /**
     * @param response a response handle
     * @return the request handle it answers; thread: any
     */
    Object requestOf(Object response);

    /**
     * @param request a request handle
     * @return its context (header, connection id, principal, listener); thread: any
     */
    RequestContext contextOf(Object request);
}
