// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

import java.util.Map;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The events a broker's network layer reports to a plugin, for the connections of the listeners the plugin is
 * installed on. Every method has a default that leaves the connection to the broker (classic): a plugin that only
 * observes implements only the events it wants, and the broker behaves as stock.
 *
 * <p>{@code Q} and {@code S} are the broker's own request and response types, opaque to the plugin: it keeps and
 * compares them by identity and reads them only through {@link NetworkProcessor} ({@code contextOf}, {@code requestOf},
 * {@code kindOf}). Passing the broker's objects, rather than wrappers, costs nothing per request and keeps a request's
 * identity the same across all its events.
 *
 * <p>A connection is owned either by the broker or by the plugin. The broker owns it until the plugin takes it over:
 * by admitting a request {@link Admission#PIPELINED} or {@link Admission#HELD} ({@link #onRequestRead}), or by
 * answering true to {@link #onUnmute}. While the plugin owns it, the broker does not mute or unmute it after a request
 * or a response (the plugin does, with {@link NetworkProcessor#mute} and {@link NetworkProcessor#unmute}) and reports
 * its quota throttle windows as {@link #onThrottleStarted} and {@link #onThrottleEnded}. The plugin gives it back with
 * {@link NetworkProcessor#handBack}; a close ends ownership too.
 *
 * <p>Threads, ordering and faults are stated in the package documentation: every method runs on a broker thread that
 * serves many connections, must not block and must not throw (a throwable is caught and counted by the broker, which
 * then proceeds as if the method had returned its default).
 *
 * <p>Lifecycle, per broker, as Kafka's other broker plugins ({@code Authorizer}, {@code CreateTopicPolicy}): the
 * broker creates the listener from its configuration, calls {@link #configure} once with that configuration, then
 * {@link #onInstalled} and the events, and {@link #close} once at shutdown. Brokers sharing a JVM each have their own
 * instance. A listener that also implements {@code org.apache.kafka.common.metrics.Monitorable} (KIP-877, Kafka 4.1+)
 * is given its {@code PluginMetrics} by the broker after {@code configure}; the broker removes those metrics when it
 * closes the listener.
 *
 * @param <Q> the broker's request type
 * @param <S> the broker's response type
 */
public interface NetworkEventListener<Q, S> extends Configurable, AutoCloseable {

    /**
     * Configures the listener with the broker's configuration, once, before any event. Thread: the broker's start-up
     * thread.
     *
     * @param configs every setting the broker was started with ({@code KafkaConfig.originals})
     * @throws org.apache.kafka.common.config.ConfigException if a setting the listener reads is invalid: the broker
     *     does not start
     */
    @Override
    default void configure(Map<String, ?> configs) {}

    /**
     * The broker shuts down: called once, when it reports no more events (its network processors and request
     * handlers stopped). Thread: the broker's shutdown thread. A throwable is logged by the broker and does not stop
     * its shutdown.
     */
    @Override
    default void close() {}

    /**
     * The plugin was installed: what the broker can report. Called once, before any other event. Thread: the
     * installing thread.
     *
     * @param capabilities what the broker reports
     */
    default void onInstalled(BrokerCapabilities capabilities) {}

    /**
     * The broker's topic-name resolver and queue gauges became available (once, when the request handlers start).
     * Thread: a request handler thread.
     *
     * @param services the services
     */
    default void onBrokerServices(BrokerServices services) {}

    /**
     * A network processor is about to process its queued responses, or has just done so: the safe point at which a
     * plugin runs deferred work for its connections. Thread: the processor's network thread.
     *
     * @param processor the processor
     */
    default void onProcessorRound(NetworkProcessor<Q, S> processor) {}

    /**
     * A request was read and parsed, before it is queued for the request handlers. Thread: the processor's network
     * thread; the connection's requests are reported in the order they were read.
     *
     * @param processor the processor that read it
     * @param request the request
     * @param context its context (header, connection id, principal, listener)
     * @param body its parsed body
     * @param sizeInBytes its size on the wire, bytes
     * @return what the broker does with it; {@link Admission#CLASSIC} (the default) on a connection the broker owns
     *     keeps it the broker's
     */
    default Admission onRequestRead(
            NetworkProcessor<Q, S> processor,
            Q request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        return Admission.CLASSIC;
    }

    /**
     * The request's order-defining step happened: a later request of its connection can no longer overtake it. For a
     * produce that is the append to the leader logs; for an offset commit, the group coordinator's append or the
     * enqueue of its write. For most requests it comes when the request handler returns from handling the request;
     * for a request of an API listed in {@link BrokerCapabilities#deferredDispatch()} whose step the broker runs later
     * (a write after a transaction verification), {@link #onDispatchDeferred} comes at handle-return and this method
     * once the step happened (or failed). At most once per request. Thread: a request handler thread, or whichever
     * thread completes a deferred step.
     *
     * @param request the request
     * @param context its context (its connection id finds its connection)
     */
    default void onRequestDispatched(Q request, RequestContext context) {}

    /**
     * The request handler returned, but the request's order-defining step comes later: {@link #onRequestDispatched}
     * follows when it happened, never before this method returned. Only for the APIs in
     * {@link BrokerCapabilities#deferredDispatch()}. Thread: a request handler thread.
     *
     * @param request the request
     * @param context its context
     */
    default void onDispatchDeferred(Q request, RequestContext context) {}

    /**
     * The processor dequeued a response ({@code Processor.dequeueResponse}, which {@code processNewResponses} calls
     * until it returns {@code null}). The listener returns the response the processor processes now: this one (the
     * default), one it was given by an earlier call and did not return then, or one taken with
     * {@link NetworkProcessor#pollResponse}; or {@code null}, which means what {@code dequeueResponse}'s {@code null}
     * for an empty queue means: nothing to process now, and {@code processNewResponses} ends. A response the listener
     * does not return stays with it: it returns it from a later call, or completes it with
     * {@link NetworkProcessor#discard} if its connection closed; each response is returned or discarded exactly once.
     * Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param response the response dequeued, or {@code null} if the queue was empty
     * @return the response to process now, or {@code null} for none
     */
    default S onResponseReady(NetworkProcessor<Q, S> processor, S response) {
        return response;
    }

    /**
     * The processor is done with a response: written to the socket, or a no-op (acks=0) or close response handled, or
     * completed without being written because its connection closed. Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param response the response
     */
    default void onResponseWritten(NetworkProcessor<Q, S> processor, S response) {}

    /**
     * A quota throttle window (KIP-219) opened on a connection the plugin owns; the broker would have kept it muted
     * until {@link #onThrottleEnded}. Throttle windows of one connection may overlap. Thread: the processor's network
     * thread.
     *
     * @param processor the processor
     * @param connectionId the connection
     */
    default void onThrottleStarted(NetworkProcessor<Q, S> processor, String connectionId) {}

    /**
     * A quota throttle window (KIP-219) closed on a connection the plugin owns. Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection
     */
    default void onThrottleEnded(NetworkProcessor<Q, S> processor, String connectionId) {}

    /**
     * The broker wrote the response of a connection it owns and is about to unmute it to read the next request (no
     * throttle window is open). Returning true takes the connection over instead: it stays muted and the plugin owns
     * it (it unmutes it when it chooses). Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection
     * @return true to take it over; false (the default) to let the broker unmute it
     */
    default boolean onUnmute(NetworkProcessor<Q, S> processor, String connectionId) {
        return false;
    }

    /**
     * A client started re-authenticating (KIP-368: a {@code SASL_HANDSHAKE} on an authenticated connection whose
     * session expires), and the broker is about to begin it on the network thread: from then until it completes, the
     * broker's authenticator writes to the socket directly and nothing else of the connection is read or written.
     * Returning true defers it: the plugin calls {@link NetworkProcessor#beginReauthentication} later, on this
     * processor's thread, exactly once unless the connection closes first, once the connection is as the broker leaves
     * it after writing a response (owned by the broker, unmuted, nothing being written). Thread: the processor's
     * network thread.
     *
     * @param processor the processor
     * @param connectionId the connection
     * @param reauthentication the pending re-authentication
     * @return true to begin it later; false (the default) to let the broker begin it now
     */
    default boolean onReauthentication(
            NetworkProcessor<Q, S> processor, String connectionId, Reauthentication reauthentication) {
        return false;
    }

    /**
     * The broker refused the request it just read on a connection the plugin owns (it does not parse; its API or
     * version is unknown or unsupported) and is about to close the connection. Returning true takes the close over:
     * the connection stays open, the plugin keeps it muted, lets its earlier responses be written, then closes it with
     * {@link NetworkProcessor#close}. Thread: the processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection
     * @return true to close it later; false (the default) to let the broker close it now
     */
    default boolean onRequestRejected(NetworkProcessor<Q, S> processor, String connectionId) {
        return false;
    }

    /**
     * The broker can read nothing more from a connection the plugin owns and is about to close it: the client's input
     * ended (an end of stream: the client closed its write side, a half-close, or closed the connection), the network
     * layer refused the next frame (its size is negative or above {@code socket.request.max.bytes}: kafka-clients'
     * {@code InvalidReceiveException}), or a read failed. Stock Kafka, which reads a connection's next request only
     * after answering the previous one, meets this only once every earlier request is answered; a plugin that read
     * ahead may not have answered them yet. Returning true takes the close over: the broker reads nothing more from
     * the connection and does not close it; the plugin mutes it now, lets its earlier responses be written (a write
     * that fails, a peer reset, still closes it at once), then closes it with {@link NetworkProcessor#close}. Thread:
     * the processor's network thread, inside the selector's poll, once {@code KafkaChannel.read} threw.
     *
     * @param processor the processor
     * @param connectionId the connection
     * @param cause what the read threw: an {@code EOFException} for an end of stream, another {@code IOException} for
     *     a failed read, an {@code InvalidReceiveException} for a refused frame
     * @return true to close it later; false (the default) to let the broker close it now
     */
    default boolean onInputEnded(NetworkProcessor<Q, S> processor, String connectionId, Throwable cause) {
        return false;
    }

    /**
     * The connection closed, by either side; responses completed after this are of a closed connection. Thread: the
     * processor's network thread.
     *
     * @param processor the processor
     * @param connectionId the connection
     */
    default void onConnectionClosed(NetworkProcessor<Q, S> processor, String connectionId) {}
}
