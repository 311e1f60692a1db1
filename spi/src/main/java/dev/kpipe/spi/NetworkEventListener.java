package dev.kpipe.spi;

import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The events a broker's network layer reports to a pipelining plugin.
 *
 * <p>Every method runs on a broker thread that serves many connections: it must not block, and it
 * must not throw (the broker treats an exception as if the listener had not been installed for that
 * event: the request is handled classically). Handles ({@code request}, {@code response}) are the
 * broker's own objects, compared by identity.
 */
public interface NetworkEventListener {

    /**
     * A network processor is about to process its queued responses, or has just done so: the safe
     * point at which a plugin runs deferred work (unmute connections whose request was
     * dispatched, release held requests after a drain).
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     */
    void onProcessorRound(NetworkProcessor processor);

    /**
     * A request was read and its header and body parsed, before it is queued for the handlers.
     * Thread: the processor's network thread. Mirrors the point in
     * {@code Processor.processCompletedReceives} just before {@code RequestChannel.sendRequest}.
     *
     * @param processor the processor that read it
     * @param request the broker's request handle
     * @param context the request context (header, connection id, principal, listener)
     * @param body the parsed request body
     * @param sizeInBytes the size of the request on the wire, in bytes
     * @return what the broker must do with the request
     */
    Admission onRequestReceived(
            NetworkProcessor processor, Object request, RequestContext context, AbstractRequest body, int sizeInBytes);

    /**
     * The request's order-defining step happened: for a produce, its batches were appended to the leader logs (or
     * refused), so a later request of the connection cannot overtake it; only the wait for acks remains. For most
     * requests that is when {@code KafkaApis.handle} returns. For a transactional produce whose partitions the broker
     * verifies with the transaction coordinator (KIP-890: the first produce to each partition in each transaction;
     * {@code AddPartitionsToTxnManager.addOrVerifyTransaction}, {@code verifyTransaction} in 3.8–3.9), the append
     * runs later, in a {@code CallbackRequest} on some request handler thread: then {@link #onDispatchDeferred}
     * comes at handle-return, and this method only once that callback has run (whether it appended or answered a
     * failed verification: fenced producer, coordinator moved, {@code CONCURRENT_TRANSACTIONS} retries exhausted).
     * Called at most once per request that {@code KafkaApis.handle} returned for (a deferred one whose completion
     * the broker's hooks miss is not signalled; the written response then tells the plugin the append happened).
     * Thread: a request handler thread, or for a deferred append whichever thread completes it (the handler running
     * the {@code CallbackRequest}, or one sending the response).
     *
     * @param request the broker's request handle
     * @param context its context
     */
    void onRequestDispatched(Object request, RequestContext context);

    /**
     * {@code KafkaApis.handle} returned for a produce request whose append is still to come: the broker sent its
     * transactional partitions to the transaction coordinator for verification (KIP-890) and will append in a
     * {@code CallbackRequest} on a request handler thread once the answer arrives. {@link #onRequestDispatched}
     * follows when that callback has run; never before this method returned. Not called when the verification
     * finished (or failed) before handle returned: then {@code onRequestDispatched} comes at once. Only called for a
     * request of an API the binding reported in {@link #onDeferredDispatchSupport}.
     * Thread: a request handler thread.
     *
     * @param request the broker's request handle
     * @param context its context
     */
    default void onDispatchDeferred(Object request, RequestContext context) {}

    /**
     * For which APIs this broker reports deferred dispatch ({@link #onDispatchDeferred}), told once at install, before
     * any request event. For a request of any other API, {@link #onRequestDispatched} comes at handle-return, which for
     * a transactional request the broker verifies first (KIP-890) is before its write, so a plugin must not read a
     * connection's next request early after a transactional request of such an API. Everything else works as usual.
     * Thread: the installing thread.
     *
     * @param apis the APIs whose deferred order-defining step is reported (a subset of PRODUCE and
     *     TXN_OFFSET_COMMIT), unmodifiable
     * @param detail the missing hook points, per API, of those the running Kafka lacks; empty if none
     */
    default void onDeferredDispatchSupport(Set<ApiKeys> apis, String detail) {}

    /**
     * The processor took a response from its response queue. The listener returns the response the
     * processor must handle now (this one, one it held earlier, or another taken with
     * {@link NetworkProcessor#pollResponse()}), or {@code null} when there is none: the processor
     * stops processing responses for this round.
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param response the response handle taken from the queue, or {@code null} if it was empty
     * @return the response to process now, or {@code null}
     */
    Object onResponseDequeued(NetworkProcessor processor, Object response);

    /**
     * A response is complete: written to the socket, or a no-op (acks=0) or close response
     * processed, or dropped because its connection closed. Mirrors
     * {@code Processor.updateRequestMetrics}.
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param response the response handle
     */
    void onResponseCompleted(NetworkProcessor processor, Object response);

    /**
     * The broker is about to feed a mute event to its own state machine for a connection.
     * Returning true consumes the event: the broker's state machine does not see it. Throttle
     * start/end (KIP-219) arrive here.
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection id
     * @param event the event
     * @return true if the plugin consumed the event
     */
    boolean onMuteEvent(NetworkProcessor processor, String connectionId, MuteEvent event);

    /**
     * The broker is about to try unmuting a connection after a response or a throttle window.
     * Returning true consumes the attempt.
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection id
     * @return true if the plugin consumed the attempt
     */
    boolean onTryUnmute(NetworkProcessor processor, String connectionId);

    /**
     * A {@code SASL_HANDSHAKE} arrived on an authenticated connection whose session expires: the client starts
     * re-authentication (KIP-368), and the broker is about to begin it on the network thread instead of queueing the
     * request ({@code KafkaChannel.maybeBeginServerReauthentication}, called from
     * {@code Processor.processCompletedReceives}). From then until re-authentication completes the broker's
     * authenticator writes its SASL responses straight to the socket, and the selector neither reads requests nor
     * writes responses of the connection. Stock Kafka reads the handshake only after the previous response was
     * written, so nothing else is on the wire then.
     *
     * <p>Returning true takes the handshake over: the broker treats it as handled (it neither queues it nor mutes the
     * connection); the plugin must later call {@link NetworkProcessor#beginReauthentication} with the handle, on
     * this processor's thread, exactly once, unless the connection closes first. Returning false lets the broker
     * begin re-authenticating now; the plugin must not mute or send on the connection until the broker reads its
     * next request. Only called when the broker would begin re-authenticating (the channel is ready, its session
     * has an expiry, the previous re-authentication began at least 1 s ago).
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection id
     * @param reauthentication an opaque handle of the pending re-authentication (channel, handshake, clock)
     * @return true if the plugin begins it later; false to let the broker begin it now
     */
    default boolean onReauthentication(NetworkProcessor processor, String connectionId, Object reauthentication) {
        return false;
    }

    /**
     * The broker is about to close the connection because the request it just read was refused before it could be
     * queued: its header or body does not parse, its API key is unknown, its version unsupported or disabled. Mirrors
     * the failure path of {@code Processor.processCompletedReceives} ({@code processChannelException} then
     * {@code close}); the broker has already logged the error. Stock Kafka reads a connection's next request only
     * after answering the previous one, so it answers every earlier request before it meets the bad one; a plugin that
     * read ahead can return true to take the close over: the broker leaves the connection open, and the plugin must
     * keep it muted, let the earlier responses be written, then close it with {@link NetworkProcessor#close}.
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection id
     * @return true if the plugin closes the connection itself, later; false to let the broker close it now
     */
    default boolean onRequestRejected(NetworkProcessor processor, String connectionId) {
        return false;
    }

    /**
     * The connection was closed, by either side. Responses completed after this are for a closed
     * connection. Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection id
     */
    void onConnectionClosed(NetworkProcessor processor, String connectionId);

    /**
     * The broker's topic id resolver became available (called once, when the request handlers
     * start). Thread: any.
     *
     * @param topicNames the resolver
     */
    default void onTopicNames(TopicNames topicNames) {}

    /**
     * The broker's queue gauges became available (called once, when the request handlers start).
     * Thread: any.
     *
     * @param load the gauges
     */
    default void onBrokerLoad(BrokerLoad load) {}
}
