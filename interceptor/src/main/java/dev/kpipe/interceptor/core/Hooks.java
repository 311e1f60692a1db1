// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import java.util.Set;
import java.util.function.Supplier;
import kafka.network.Processor;
import kafka.server.KafkaApis;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The static entry points the inlined advice calls, for every Kafka version line: the hooked members of
 * {@code kafka.network.Processor}, {@code RequestChannel} and {@code KafkaApis} are the same in 3.8 to 4.4; the
 * version's request and response classes are reached through the active binding's {@link RequestModel}, its metadata
 * cache and purgatory through the binding ({@link KafkaBinding#topicNames}, {@link KafkaBinding#delayedProduceRequests}). Each entry
 * point translates the broker's objects to the SPI, calls the listener, and swallows (and counts) any throwable so
 * that none reaches a broker thread; on a throwable the broker's own behaviour proceeds.
 *
 * <p>Threads: as noted per method (network threads, request handler threads). One binding is active per JVM; each
 * broker has its own listener, found from the processor or {@code KafkaApis} a hook runs for ({@link Brokers}) and
 * kept per thread.
 *
 * <p>Public only because advice is inlined into the broker's classes; not an API.
 */
public final class Hooks {

    private static final Logger LOG = LoggerFactory.getLogger("org.apache.kafka.common.network.Selector");

    /** The line's request model; published last at install: advice that sees it sees the binding. */
    private static volatile RequestModel model;

    private static volatile KafkaBinding binding;

    /** The binding of the processor whose network thread this is. */
    private static final ThreadLocal<ProcessorBinding> CURRENT = new ThreadLocal<>();
    /** The broker of the {@code KafkaApis} whose request handler thread this is. */
    private static final ThreadLocal<HandlerBinding> HANDLER = new ThreadLocal<>();

    private Hooks() {}

    /** Thread: any (install, before the advice is installed). */
    static void activate(RequestModel requestModel, KafkaBinding kafkaBinding, Set<ApiKeys> deferredDispatch) {
        binding = kafkaBinding;
        AppendHooks.activate(requestModel, deferredDispatch);
        model = requestModel;
    }

    /**
     * Thread: network. Binds the processor, and its broker's hooks, to its thread on its first round; again after a
     * broker's kpipe changed if its own had none.
     */
    private static ProcessorBinding binding(Object processor) {
        ProcessorBinding b = CURRENT.get();
        if (b == null || b.processor != processor || b.stale()) {
            Processor p = (Processor) processor;
            int generation = Interceptor.brokersGeneration();
            b = new ProcessorBinding(p, Brokers.of(p), generation, model);
            CURRENT.set(b);
        }
        return b;
    }

    /** A request handler thread's broker: the hooks of the {@code KafkaApis} it last ran. */
    record HandlerBinding(Object apis, BrokerHooks broker, int generation, DeferredAppends.Signals signals) {
        boolean stale() {
            return generation != Interceptor.brokersGeneration() && (broker == null || broker.listener() == null);
        }

        NetworkEventListener<Object, Object> listener() {
            return broker == null ? null : broker.listener();
        }
    }

    /** Thread: request handler. */
    static HandlerBinding handler(Object apis) {
        HandlerBinding h = HANDLER.get();
        if (h == null || h.apis != apis || h.stale()) {
            int generation = Interceptor.brokersGeneration();
            BrokerHooks broker = Brokers.of((KafkaApis) apis);
            h = new HandlerBinding(
                    apis, broker, generation, broker == null ? null : AppendHooks.signals(broker, model));
            HANDLER.set(h);
        }
        return h;
    }

    /** {@code Processor.processNewResponses} enter and exit. Thread: network. */
    public static void round(Object processor) {
        if (model == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            NetworkEventListener<Object, Object> l = b.listener();
            if (l != null) {
                l.onProcessorRound(b);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /** {@code Processor.dequeueResponse} exit. Thread: network. */
    public static Object dequeued(Object processor, Object response) {
        if (model == null) {
            return response;
        }
        try {
            ProcessorBinding b = binding(processor);
            NetworkEventListener<Object, Object> l = b.listener();
            return l != null ? l.onResponseReady(b, response) : response;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return response;
        }
    }

    /** {@code Processor.updateRequestMetrics} enter. Thread: network. */
    public static void completed(Object processor, Object response) {
        if (model == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            NetworkEventListener<Object, Object> l = b.listener();
            if (l != null) {
                l.onResponseWritten(b, response);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
        AppendHooks.responseSent(response);
    }

    /**
     * {@code Processor.handleChannelMuteEvent} enter: Kafka's mute state machine does not see the events of a
     * connection the plugin owns; its throttle windows (KIP-219) are reported instead. Thread: network.
     *
     * @return true to skip the broker's body
     */
    public static boolean muteEvent(Object processor, String connectionId, Object event) {
        if (model == null) {
            return false;
        }
        try {
            ProcessorBinding b = binding(processor);
            NetworkEventListener<Object, Object> l = b.listener();
            if (l == null || !b.owns(connectionId)) {
                return false;
            }
            if (event == KafkaChannel.ChannelMuteEvent.THROTTLE_STARTED) {
                l.onThrottleStarted(b, connectionId);
            } else if (event == KafkaChannel.ChannelMuteEvent.THROTTLE_ENDED) {
                l.onThrottleEnded(b, connectionId);
            } // REQUEST_RECEIVED, RESPONSE_SENT: the plugin mutes and unmutes the connection itself
            return true;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /**
     * {@code Processor.tryUnmuteChannel} enter: a connection the plugin owns stays as the plugin keeps it; a
     * connection Kafka is about to unmute from its plain {@code MUTED} state is offered to the plugin first
     * ({@code onUnmute}), which may take it over. Thread: network.
     *
     * @return true to skip the broker's body
     */
    public static boolean tryUnmute(Object processor, String connectionId) {
        if (model == null) {
            return false;
        }
        try {
            ProcessorBinding b = binding(processor);
            NetworkEventListener<Object, Object> l = b.listener();
            if (l == null) {
                return false;
            }
            if (b.owns(connectionId)) {
                return true;
            }
            if (b.mutedOnly(connectionId) && l.onUnmute(b, connectionId)) {
                b.own(connectionId, true);
                return true;
            }
            return false;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /**
     * {@code Processor.close(String)} enter. Thread: network. A close for a connection whose request, read in this
     * poll, was refused (its receive is still among the selector's completed receives: the close comes from {@code
     * processCompletedReceives}) is offered to the listener first, which may take it over.
     *
     * @return true to skip the broker's body (the listener closes the connection later)
     */
    public static boolean closed(Object processor, String connectionId) {
        if (model == null) {
            return false;
        }
        ProcessorBinding b;
        NetworkEventListener<Object, Object> l = null;
        try {
            b = binding(processor);
            l = b.listener();
            if (l == null) {
                return false;
            }
            if (b.owns(connectionId) && b.hasCompletedReceive(connectionId) && l.onRequestRejected(b, connectionId)) {
                return true;
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
            b = CURRENT.get();
            l = b == null ? null : b.listener();
        }
        if (b != null && b.processor == processor && l != null) {
            b.own(connectionId, false);
            try {
                // Once per connection (the SPI's contract): a connection the selector closed already in this poll is
                // among its disconnections, reported by processDisconnected; a second close reports nothing.
                if (b.hasChannel(connectionId)) {
                    l.onConnectionClosed(b, connectionId);
                }
            } catch (Throwable t) {
                Interceptor.hookFault();
            }
        }
        return false;
    }

    /**
     * {@code Processor.processCompletedReceives} enter: drops the receives of connections the selector closed in this
     * poll (see {@link ProcessorBinding#dropOrphanedReceives}). Thread: network.
     */
    public static void receives(Object processor) {
        if (model == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            if (b.listener() != null) {
                Interceptor.orphanedReceives(b.dropOrphanedReceives());
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /** {@code Processor.processDisconnected} enter. Thread: network. */
    public static void disconnected(Object processor) {
        if (model == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            NetworkEventListener<Object, Object> l = b.listener();
            if (l == null) {
                return;
            }
            for (String connectionId : b.processor.selector().disconnected().keySet()) {
                b.own(connectionId, false);
                l.onConnectionClosed(b, connectionId);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /**
     * {@code RequestChannel.sendRequest} enter. Thread: network (the processor that read the request).
     *
     * @return true to skip the broker's body (the request is held)
     */
    public static boolean requestReceived(Object channel, Object request) {
        try {
            ProcessorBinding b = CURRENT.get();
            if (b == null || b.forwarding) {
                return false;
            }
            NetworkEventListener<Object, Object> l = b.listener();
            if (l == null) {
                return false;
            }
            RequestModel m = b.model;
            if (m.processorOf(request) != b.processor.id()) {
                return false;
            }
            RequestContext context = m.contextOf(request);
            Admission a = l.onRequestRead(b, request, context, m.bodyOf(request), m.sizeInBytesOf(request));
            b.own(context.connectionId, a != Admission.CLASSIC);
            return a == Admission.HELD;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /**
     * {@code KafkaChannel.maybeBeginServerReauthentication} enter. Thread: network (the processor that read the
     * {@code SASL_HANDSHAKE}); other callers (a channel of another processor, the plugin itself beginning a deferred
     * re-authentication, a channel that would not begin re-authenticating) are left alone.
     *
     * @return true to skip the broker's body and answer true: the plugin begins re-authentication later
     */
    @SuppressWarnings("unchecked")
    public static boolean reauthentication(Object channel, Object handshake, Object clock) {
        try {
            ProcessorBinding b = CURRENT.get();
            if (b == null || b.reauthenticating) {
                return false;
            }
            NetworkEventListener<Object, Object> l = b.listener();
            if (l == null) {
                return false;
            }
            KafkaChannel c = (KafkaChannel) channel;
            Supplier<Long> nanos = (Supplier<Long>) clock;
            if (!b.serves(c) || !PendingReauthentication.wouldBegin(c, nanos)) {
                return false;
            }
            boolean deferred =
                    l.onReauthentication(b, c.id(), new PendingReauthentication(c, (NetworkReceive) handshake, nanos));
            b.own(c.id(), deferred);
            return deferred;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /**
     * {@code KafkaChannel.read()} exit with a throwable: the selector can read nothing more from the channel and would
     * close it ({@code Selector.pollSelectionKeys} catches it and closes with {@code CloseMode.GRACEFUL}). For a
     * channel of this processor whose connection the plugin owns, the close is offered to the listener first
     * ({@link NetworkEventListener#onInputEnded}), which may take it over: the throwable is then dropped, logged as
     * the selector would have logged it. The listener mutes the channel at once, so the selector reads it no more (an
     * end of stream would be read again at every poll); {@code Selector.attemptRead} then sees a muted channel and
     * flags memory pressure, which its next poll clears, unmuting no channel that was muted explicitly. Thread:
     * network (other callers, such as the broker's own client selectors, are left alone).
     *
     * @return true to drop the throwable (the read answers 0 bytes; the plugin closes the connection later)
     */
    public static boolean inputEnded(Object channel, Throwable thrown) {
        try {
            ProcessorBinding b = CURRENT.get();
            NetworkEventListener<Object, Object> l = b == null ? null : b.listener();
            if (l == null) {
                return false;
            }
            KafkaChannel c = (KafkaChannel) channel;
            String id = c.id();
            if (!b.owns(id) || !b.serves(c) || !l.onInputEnded(b, id, thrown)) {
                return false;
            }
            logInputEnded(c, thrown);
            return true;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /** As {@code Selector.pollSelectionKeys} logs the throwable it closes a channel for. */
    private static void logInputEnded(KafkaChannel c, Throwable thrown) {
        if (thrown instanceof java.io.IOException) {
            if (LOG.isDebugEnabled()) {
                LOG.debug(
                        "Connection with {} (channelId={}) disconnected; closing it once the requests read before"
                                + " are answered",
                        c.socketDescription(),
                        c.id(),
                        thrown);
            }
        } else {
            LOG.warn(
                    "Unexpected error from {} (channelId={}); closing connection once the requests read before are"
                            + " answered",
                    c.socketDescription(),
                    c.id(),
                    thrown);
        }
    }

    /** {@code KafkaApis.handle} exit, normal or exceptional. Thread: request handler. */
    public static void dispatched(Object apis, Object request) {
        if (model == null) {
            return;
        }
        HandlerBinding h;
        try {
            h = handler(apis);
        } catch (Throwable t) {
            Interceptor.hookFault();
            return;
        }
        NetworkEventListener<Object, Object> l = h.listener();
        try {
            // first, so that a fault publishing the topic names cannot leave the request undispatched
            if (AppendHooks.handleReturned(request) && l != null) {
                l.onRequestDispatched(request, model.contextOf(request));
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
        if (l != null && h.broker().claimServices()) {
            try {
                KafkaBinding b = binding;
                KafkaApis a = (KafkaApis) apis;
                l.onBrokerServices(
                        new BrokerServices(b.topicNames(a), new KafkaBrokerLoad(a, b.delayedProduceRequests(a))));
            } catch (Throwable t) {
                Interceptor.hookFault();
            }
        }
    }
}
