// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import java.util.Set;
import java.util.function.Supplier;
import kafka.network.Processor;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The static entry points the inlined advice calls on network threads, for every Kafka line: the hooked members of
 * {@code kafka.network.Processor}, {@code RequestChannel} and {@code KafkaChannel} are the same in 3.8 to 4.4; the
 * line's request and response classes are reached through its {@link RequestModel}. Each hook runs in one guard
 * ({@link #guard}): it translates the broker's objects to the SPI and calls the listener, and on a throwable (counted
 * on the processor's broker's {@link HookCounters}) the broker's own behaviour proceeds; a {@link VirtualMachineError}
 * goes on to the broker thread, as it would without kpipe. The request handler's hooks are {@link HandlerHooks},
 * deferred dispatch's {@link AppendHooks}.
 *
 * <p>Threads: network threads. One binding is active per JVM; each broker has its own listener, found from the
 * processor a hook runs for ({@link Brokers}) and kept per thread.
 *
 * <p>Public only because advice is inlined into the broker's classes; not an API.
 */
public final class Hooks {

    private static final Logger LOG = LoggerFactory.getLogger(Hooks.class);
    /** For the one line that reproduces the WARN of {@code Selector.pollSelectionKeys}, under its logger. */
    private static final Logger SELECTOR_LOG = LoggerFactory.getLogger("org.apache.kafka.common.network.Selector");

    /** The line's request model; published last at install: advice that sees it sees the binding. */
    private static volatile RequestModel model;

    /** The processor whose network thread this is. */
    private static final ThreadLocal<KafkaNetworkProcessor> PROCESSOR = new ThreadLocal<>();

    private Hooks() {}

    /** Thread: any (install, before the advice is installed). */
    static void activate(RequestModel requestModel, KafkaBinding binding, Set<ApiKeys> deferredDispatch) {
        HandlerHooks.activate(requestModel, binding);
        AppendHooks.activate(requestModel, deferredDispatch);
        model = requestModel;
    }

    /**
     * A hook's body on a network thread. Implementations capture nothing (a lambda that captures nothing is one
     * instance), so that a hook allocates nothing.
     *
     * @param <A> the first argument's type
     * @param <B> the second argument's type
     * @param <R> the answer's type ({@code Void} for none)
     */
    @FunctionalInterface
    interface NetworkHook<A, B, R> {
        R run(KafkaNetworkProcessor processor, NetworkEventListener<Object, Object> listener, A a, B b)
                throws Throwable;
    }

    /**
     * The guard every network-thread hook runs in: answers {@code otherwise} until the advice is active, finds the
     * processor (made for this thread on its first round, or again after a broker's kpipe changed), answers {@code
     * otherwise} if its connections have no listener, else runs the body. A throwable is counted on the processor's
     * broker (on the JVM's fallback if finding the processor failed: {@link HookCounters#faultOn(BrokerHooks)}) and
     * answered with {@code otherwise}, but for a {@link VirtualMachineError}, which is rethrown.
     *
     * @param processor the hooked {@code kafka.network.Processor}, or {@code null} for the processor whose network
     *     thread this is (the hooks on {@code RequestChannel} and {@code KafkaChannel}; none before its first round)
     * @return the body's answer, or {@code otherwise}
     */
    private static <A, B, R> R guard(Object processor, A a, B b, R otherwise, NetworkHook<A, B, R> hook) {
        if (model == null) {
            return otherwise;
        }
        KafkaNetworkProcessor p = null;
        try {
            p = processor == null ? PROCESSOR.get() : processor(processor);
            NetworkEventListener<Object, Object> l = p == null ? null : p.listener();
            return l == null ? otherwise : hook.run(p, l, a, b);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            HookCounters.faultOn(p == null ? null : p.broker);
            return otherwise;
        }
    }

    /** @return this thread's {@link KafkaNetworkProcessor}, made again if it is another processor's or stale */
    private static KafkaNetworkProcessor processor(Object processor) {
        KafkaNetworkProcessor p = PROCESSOR.get();
        if (p == null || p.processor != processor || p.stale()) {
            Processor kafka = (Processor) processor;
            int generation = Interceptor.brokersGeneration();
            p = new KafkaNetworkProcessor(kafka, Brokers.of(kafka), generation, model);
            PROCESSOR.set(p);
        }
        return p;
    }

    /**
     * What the advice does with a throwable of its own (its exception handler, {@link KafkaBinding#advise}): a
     * {@link VirtualMachineError} goes on to the broker's thread; any other is counted on the broker whose thread this
     * is ({@link #threadBroker()}) and dropped. Thread: any.
     *
     * @param thrown what the advice threw
     */
    public static void adviceThrew(Throwable thrown) {
        if (thrown instanceof VirtualMachineError e) {
            throw e;
        }
        HookCounters.faultOn(threadBroker());
    }

    /**
     * For a hook that fails outside a broker's guard: each broker has its own network and request handler threads, so
     * the broker the hooks last found on this thread is the one it works for. Thread: any; a fault's path only (a
     * thread the hooks never ran on gets an empty thread-local entry).
     *
     * @return the broker of this thread's processor (a network thread) or of its {@code KafkaApis} (a request handler
     *     thread), as the hooks last found it, or {@code null} if they found none on this thread
     */
    static BrokerHooks threadBroker() {
        KafkaNetworkProcessor p = PROCESSOR.get();
        return p != null ? p.broker : HandlerHooks.threadBroker();
    }

    /** {@code Processor.processNewResponses} enter and exit. Thread: network. */
    public static void round(Object processor) {
        guard(processor, null, null, null, (p, l, a, b) -> {
            l.onProcessorRound(p);
            return null;
        });
    }

    /** {@code Processor.dequeueResponse} exit. Thread: network. */
    public static Object dequeued(Object processor, Object response) {
        return guard(processor, response, null, response, (p, l, r, b) -> l.onResponseReady(p, r));
    }

    /** {@code Processor.updateRequestMetrics} enter. Thread: network. */
    public static void completed(Object processor, Object response) {
        guard(processor, response, null, null, (p, l, r, b) -> {
            l.onResponseWritten(p, r);
            return null;
        });
        AppendHooks.responseSent(response);
    }

    /**
     * {@code Processor.handleChannelMuteEvent} enter: Kafka's mute state machine does not see the events of a
     * connection the plugin owns; its throttle windows (KIP-219) are reported instead. Thread: network.
     *
     * @return true to skip the broker's body
     */
    public static boolean muteEvent(Object processor, String connectionId, Object event) {
        return guard(processor, connectionId, event, Boolean.FALSE, (p, l, id, e) -> {
            if (!p.owns(id)) {
                return false;
            }
            if (e == KafkaChannel.ChannelMuteEvent.THROTTLE_STARTED) {
                l.onThrottleStarted(p, id);
            } else if (e == KafkaChannel.ChannelMuteEvent.THROTTLE_ENDED) {
                l.onThrottleEnded(p, id);
            } // REQUEST_RECEIVED, RESPONSE_SENT: the plugin mutes and unmutes the connection itself
            return true;
        });
    }

    /**
     * {@code Processor.tryUnmuteChannel} enter: a connection the plugin owns stays as the plugin keeps it; a
     * connection Kafka is about to unmute from its plain {@code MUTED} state is offered to the plugin first
     * ({@code onUnmute}), which may take it over. Thread: network.
     *
     * @return true to skip the broker's body
     */
    public static boolean tryUnmute(Object processor, String connectionId) {
        return guard(processor, connectionId, null, Boolean.FALSE, (p, l, id, b) -> {
            if (p.owns(id)) {
                return true;
            }
            if (p.mutedOnly(id) && l.onUnmute(p, id)) {
                p.own(id, true);
                return true;
            }
            return false;
        });
    }

    /**
     * {@code Processor.close(String)} enter. Thread: network. A close for a connection whose request, read in this
     * poll, was refused (its receive is still among the selector's completed receives: the close comes from {@code
     * processCompletedReceives}) is offered to the listener first, which may take it over. Otherwise the connection is
     * the plugin's no more, and its close is reported, even if the offer threw.
     *
     * @return true to skip the broker's body (the listener closes the connection later)
     */
    public static boolean closed(Object processor, String connectionId) {
        if (guard(
                processor,
                connectionId,
                null,
                Boolean.FALSE,
                (p, l, id, b) -> p.owns(id) && p.hasCompletedReceive(id) && l.onRequestRejected(p, id))) {
            return true;
        }
        guard(null, processor, connectionId, null, (p, l, hooked, id) -> {
            if (p.processor == hooked) {
                p.own(id, false);
                // Once per connection (the SPI's contract): a connection the selector closed already in this poll is
                // among its disconnections, reported by processDisconnected; a second close reports nothing.
                if (p.hasChannel(id)) {
                    l.onConnectionClosed(p, id);
                }
            }
            return null;
        });
        return false;
    }

    /**
     * {@code Processor.processCompletedReceives} enter: drops the receives of connections the selector closed in this
     * poll (see {@link KafkaNetworkProcessor#dropOrphanedReceives}). Thread: network.
     */
    public static void receives(Object processor) {
        guard(processor, null, null, null, (p, l, a, b) -> {
            p.broker.counters().orphanedReceives(p.dropOrphanedReceives()); // a listener: its broker has hooks
            return null;
        });
    }

    /** {@code Processor.processDisconnected} enter. Thread: network. */
    public static void disconnected(Object processor) {
        guard(processor, null, null, null, (p, l, a, b) -> {
            for (String connectionId : p.processor.selector().disconnected().keySet()) {
                p.own(connectionId, false);
                l.onConnectionClosed(p, connectionId);
            }
            return null;
        });
    }

    /**
     * {@code RequestChannel.sendRequest} enter. Thread: network (the processor that read the request).
     *
     * @return true to skip the broker's body (the request is held)
     */
    public static boolean requestReceived(Object channel, Object request) {
        return guard(null, request, null, Boolean.FALSE, (p, l, r, b) -> {
            if (p.forwarding) {
                return false;
            }
            RequestModel m = p.model;
            if (m.processorOf(r) != p.processor.id()) {
                return false;
            }
            RequestContext context = m.contextOf(r);
            Admission a = l.onRequestRead(p, r, context, m.bodyOf(r), m.sizeInBytesOf(r));
            p.own(context.connectionId, a != Admission.CLASSIC);
            return a == Admission.HELD;
        });
    }

    /**
     * {@code KafkaChannel.maybeBeginServerReauthentication} enter. Thread: network (the processor that read the
     * {@code SASL_HANDSHAKE}); other callers (a channel of another processor, the plugin itself beginning a deferred
     * re-authentication, a channel that would not begin re-authenticating) are left alone. Once per handshake, so its
     * body may capture the clock.
     *
     * @return true to skip the broker's body and answer true: the plugin begins re-authentication later
     */
    public static boolean reauthentication(Object channel, Object handshake, Object clock) {
        return guard(null, channel, handshake, Boolean.FALSE, (p, l, c, h) -> reauthentication(p, l, c, h, clock));
    }

    @SuppressWarnings("unchecked")
    private static boolean reauthentication(
            KafkaNetworkProcessor p,
            NetworkEventListener<Object, Object> l,
            Object channel,
            Object handshake,
            Object clock)
            throws Throwable {
        KafkaChannel c = (KafkaChannel) channel;
        Supplier<Long> nanos = (Supplier<Long>) clock;
        if (p.reauthenticating || !p.serves(c) || !PendingReauthentication.wouldBegin(c, nanos)) {
            return false;
        }
        boolean deferred =
                l.onReauthentication(p, c.id(), new PendingReauthentication(c, (NetworkReceive) handshake, nanos));
        p.own(c.id(), deferred);
        return deferred;
    }

    /**
     * {@code KafkaChannel.read()} exit with a throwable: the selector can read nothing more from the channel and would
     * close it ({@code Selector.pollSelectionKeys} catches it and closes with {@code CloseMode.GRACEFUL}). For a
     * channel of this processor whose connection the plugin owns, the close is offered to the listener first
     * ({@link NetworkEventListener#onInputEnded}), which may take it over: the throwable is then dropped, logged as
     * the selector would have logged it. The listener mutes the channel at once, so the selector reads it no more (an
     * end of stream would be read again at every poll); {@code Selector.attemptRead} then sees a muted channel and
     * flags memory pressure, which its next poll clears, unmuting no channel that was muted explicitly. A
     * {@link VirtualMachineError} is never dropped, and an {@link AuthenticationException} (a TLS 1.3 post-handshake
     * failure, {@code KafkaChannel.receive}) is never offered: the selector records it as a failed authentication and
     * closes the channel, as stock does. Thread: network (other callers, such as the broker's own client
     * selectors, are left alone).
     *
     * @return true to drop the throwable (the read answers 0 bytes; the plugin closes the connection later)
     */
    public static boolean inputEnded(Object channel, Throwable thrown) {
        if (thrown instanceof VirtualMachineError || thrown instanceof AuthenticationException) {
            return false;
        }
        return guard(null, channel, thrown, Boolean.FALSE, (p, l, ch, t) -> {
            KafkaChannel c = (KafkaChannel) ch;
            String id = c.id();
            if (!p.owns(id) || !p.serves(c) || !l.onInputEnded(p, id, t)) {
                return false;
            }
            logInputEnded(c, t);
            return true;
        });
    }

    /**
     * As {@code Selector.pollSelectionKeys} logs the throwable it closes a channel for: the WARN of an unexpected error
     * as the Selector's own line, under its logger; the disconnect, which kpipe words differently (it closes later),
     * at DEBUG under kpipe's.
     */
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
            SELECTOR_LOG.warn(
                    "Unexpected error from {} (channelId={}); closing connection once the requests read before are"
                            + " answered",
                    c.socketDescription(),
                    c.id(),
                    thrown);
        }
    }
}
