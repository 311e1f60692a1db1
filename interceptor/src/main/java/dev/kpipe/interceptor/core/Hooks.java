package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.MuteEvent;
import dev.kpipe.spi.NetworkEventListener;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;
import kafka.network.Processor;
import kafka.server.KafkaApis;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The static entry points the inlined advice calls, for every Kafka version line: the hooked members of
 * {@code kafka.network.Processor}, {@code RequestChannel} and {@code KafkaApis} are the same in 3.8 to 4.4; the
 * version's request and response classes are reached through the active binding's {@link RequestModel}, its metadata
 * cache and purgatory through the binding ({@link KafkaBinding#topicNames}, {@link KafkaBinding#delayedProduceRequests}). Each entry
 * point translates the broker's objects to the SPI, calls the listener, and swallows (and counts) any throwable so
 * that none reaches a broker thread; on a throwable the broker's own behaviour proceeds.
 *
 * <p>Threads: as noted per method (network threads, request handler threads). One binding is active per JVM.
 *
 * <p>Public only because advice is inlined into the broker's classes; not an API.
 */
public final class Hooks {

    private static final MuteEvent[] MUTE_EVENTS = MuteEvent.values();

    private static volatile NetworkEventListener listener;
    private static volatile Predicate<String> listenerFilter = name -> false;
    private static volatile RequestModel model;
    private static volatile KafkaBinding binding;
    private static volatile boolean topicNamesPublished;

    /** The binding of the processor whose network thread this is. */
    private static final ThreadLocal<ProcessorBinding> CURRENT = new ThreadLocal<>();

    private Hooks() {}

    /** Thread: any (install). The listener is published last: advice that sees it sees the filter and model. */
    static void activate(
            NetworkEventListener l,
            Predicate<String> filter,
            RequestModel requestModel,
            KafkaBinding kafkaBinding,
            Set<ApiKeys> deferredDispatch) {
        listenerFilter = filter;
        model = requestModel;
        binding = kafkaBinding;
        AppendHooks.activate(l, requestModel, deferredDispatch);
        listener = l;
    }

    /** Thread: network. Binds the processor to its thread on its first round. */
    private static ProcessorBinding binding(Object processor) {
        ProcessorBinding b = CURRENT.get();
        if (b == null || b.processor != processor) {
            Processor p = (Processor) processor;
            b = new ProcessorBinding(p, listenerFilter.test(ProcessorBinding.listenerNameOf(p)), model);
            CURRENT.set(b);
        }
        return b;
    }

    /** {@code Processor.processNewResponses} enter and exit. Thread: network. */
    public static void round(Object processor) {
        NetworkEventListener l = listener;
        if (l == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            if (b.active) {
                l.onProcessorRound(b);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /** {@code Processor.dequeueResponse} exit. Thread: network. */
    public static Object dequeued(Object processor, Object response) {
        NetworkEventListener l = listener;
        if (l == null) {
            return response;
        }
        try {
            ProcessorBinding b = binding(processor);
            return b.active ? l.onResponseDequeued(b, response) : response;
        } catch (Throwable t) {
            Interceptor.hookFault();
            return response;
        }
    }

    /** {@code Processor.updateRequestMetrics} enter. Thread: network. */
    public static void completed(Object processor, Object response) {
        NetworkEventListener l = listener;
        if (l == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            if (b.active) {
                l.onResponseCompleted(b, response);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
        AppendHooks.responseSent(response);
    }

    /** {@code Processor.handleChannelMuteEvent} enter. Thread: network. @return true to skip the broker's body */
    public static boolean muteEvent(Object processor, String connectionId, Object event) {
        NetworkEventListener l = listener;
        if (l == null) {
            return false;
        }
        try {
            ProcessorBinding b = binding(processor);
            return b.active && l.onMuteEvent(b, connectionId, MUTE_EVENTS[((Enum<?>) event).ordinal()]);
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /** {@code Processor.tryUnmuteChannel} enter. Thread: network. @return true to skip the broker's body */
    public static boolean tryUnmute(Object processor, String connectionId) {
        NetworkEventListener l = listener;
        if (l == null) {
            return false;
        }
        try {
            ProcessorBinding b = binding(processor);
            return b.active && l.onTryUnmute(b, connectionId);
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
        NetworkEventListener l = listener;
        if (l == null) {
            return false;
        }
        ProcessorBinding b;
        try {
            b = binding(processor);
            if (!b.active) {
                return false;
            }
            if (b.hasCompletedReceive(connectionId) && l.onRequestRejected(b, connectionId)) {
                return true;
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
            b = CURRENT.get();
        }
        try {
            if (b != null && b.processor == processor && b.active) {
                l.onConnectionClosed(b, connectionId);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
        return false;
    }

    /**
     * {@code Processor.processCompletedReceives} enter: drops the receives of connections the selector closed in this
     * poll (see {@link ProcessorBinding#dropOrphanedReceives}). Thread: network.
     */
    public static void receives(Object processor) {
        if (listener == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            if (b.active) {
                Interceptor.orphanedReceives(b.dropOrphanedReceives());
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /** {@code Processor.processDisconnected} enter. Thread: network. */
    public static void disconnected(Object processor) {
        NetworkEventListener l = listener;
        if (l == null) {
            return;
        }
        try {
            ProcessorBinding b = binding(processor);
            if (!b.active) {
                return;
            }
            for (String connectionId : b.processor.selector().disconnected().keySet()) {
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
        NetworkEventListener l = listener;
        if (l == null) {
            return false;
        }
        try {
            ProcessorBinding b = CURRENT.get();
            if (b == null || !b.active || b.forwarding) {
                return false;
            }
            RequestModel m = b.model;
            if (m.processorOf(request) != b.processor.id()) {
                return false;
            }
            return l.onRequestReceived(b, request, m.contextOf(request), m.bodyOf(request), m.sizeInBytesOf(request))
                    == Admission.HELD;
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
        NetworkEventListener l = listener;
        if (l == null) {
            return false;
        }
        try {
            ProcessorBinding b = CURRENT.get();
            if (b == null || !b.active || b.reauthenticating) {
                return false;
            }
            KafkaChannel c = (KafkaChannel) channel;
            Supplier<Long> nanos = (Supplier<Long>) clock;
            if (!b.owns(c) || !PendingReauthentication.wouldBegin(c, nanos)) {
                return false;
            }
            return l.onReauthentication(b, c.id(), new PendingReauthentication(c, (NetworkReceive) handshake, nanos));
        } catch (Throwable t) {
            Interceptor.hookFault();
            return false;
        }
    }

    /** {@code KafkaApis.handle} exit, normal or exceptional. Thread: request handler. */
    public static void dispatched(Object apis, Object request) {
        NetworkEventListener l = listener;
        if (l == null) {
            return;
        }
        try {
            // first, so that a fault publishing the topic names cannot leave the request undispatched
            if (AppendHooks.handleReturned(request)) {
                l.onRequestDispatched(request, model.contextOf(request));
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
        try {
            if (!topicNamesPublished) {
                publishTopicNames(l, (KafkaApis) apis);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    private static synchronized void publishTopicNames(NetworkEventListener l, KafkaApis apis) {
        if (!topicNamesPublished) {
            topicNamesPublished = true;
            KafkaBinding b = binding;
            l.onTopicNames(b.topicNames(apis));
            l.onBrokerLoad(new KafkaBrokerLoad(apis, b.delayedProduceRequests(apis)));
        }
    }
}
