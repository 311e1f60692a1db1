// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import dev.kpipe.spi.ResponseKind;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.LinkedBlockingDeque;
import kafka.network.Processor;
import kafka.network.RequestChannel;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link NetworkProcessor} over one {@code kafka.network.Processor} (the same class, with the same members this uses,
 * in Kafka 3.8 to 4.4); the version's request and response objects are handled by its {@link RequestModel}. Private
 * members are reached through method handles resolved once per JVM (the hook points were checked before install).
 *
 * <p>It also keeps which connections the plugin owns ({@link #owns(String)}): taken by an admission
 * ({@code PIPELINED}, {@code HELD}), a deferred re-authentication or a take-over at unmute; given back by
 * {@link #handBack}, an admission {@code CLASSIC} or a re-authentication the plugin lets begin; ended by a close. For
 * those the hooks keep Kafka's own mute state machine out of the way ({@link Hooks#muteEvent}, {@link Hooks#tryUnmute}).
 *
 * <p>Threads: see {@link NetworkProcessor}; one instance per processor, created on and confined to its network
 * thread except for the methods that interface allows from any thread.
 */
final class KafkaNetworkProcessor implements NetworkProcessor<Object, Object> {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaNetworkProcessor.class);
    private static final MethodHandle HANDLE_MUTE_EVENT;
    private static final MethodHandle CLOSE;
    private static final MethodHandle RESPONSE_QUEUE;
    private static final MethodHandle LISTENER_NAME;
    private static final MethodHandle REQUEST_CHANNEL;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(Processor.class, MethodHandles.lookup());
            HANDLE_MUTE_EVENT = lookup.findVirtual(
                    Processor.class,
                    "handleChannelMuteEvent",
                    MethodType.methodType(void.class, String.class, KafkaChannel.ChannelMuteEvent.class));
            CLOSE = lookup.findVirtual(Processor.class, "close", MethodType.methodType(void.class, String.class));
            RESPONSE_QUEUE = lookup.findVirtual(
                    Processor.class, "responseQueue", MethodType.methodType(LinkedBlockingDeque.class));
            LISTENER_NAME = lookup.findGetter(Processor.class, "listenerName", ListenerName.class);
            REQUEST_CHANNEL = lookup.findGetter(Processor.class, "requestChannel", RequestChannel.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Processor processor;
    /** The processor's broker's hooks, or {@code null} if its broker runs without kpipe. */
    final BrokerHooks broker;
    /** {@link Interceptor#brokersGeneration()} when {@link #broker} was looked up. */
    final int generation;
    /** Whether the broker pipelines this processor's listener. */
    private final boolean pipelined;

    final RequestModel model;
    /** True while {@link #release} re-enters {@code RequestChannel.sendRequest}. Network thread only. */
    boolean forwarding;
    /**
     * True while {@link #beginReauthentication} re-enters {@code KafkaChannel.maybeBeginServerReauthentication}. Network
     * thread only.
     */
    boolean reauthenticating;

    /** The connections the plugin owns. Network thread only. */
    private final Set<String> owned = new HashSet<>();

    private final String listenerName;
    private final Selector selector;
    private final LinkedBlockingDeque<?> responseQueue;
    private final RequestChannel requestChannel;

    /**
     * @param processor the processor
     * @param broker its broker's hooks, or {@code null}
     * @param generation {@link Interceptor#brokersGeneration()} before {@code broker} was looked up
     * @param model the line's request model
     */
    KafkaNetworkProcessor(Processor processor, BrokerHooks broker, int generation, RequestModel model) {
        this.processor = processor;
        this.broker = broker;
        this.generation = generation;
        this.model = model;
        this.selector = processor.selector();
        try {
            this.listenerName = ((ListenerName) LISTENER_NAME.invoke(processor)).value();
            this.responseQueue = (LinkedBlockingDeque<?>) RESPONSE_QUEUE.invoke(processor);
            this.requestChannel = (RequestChannel) REQUEST_CHANNEL.invoke(processor);
        } catch (VirtualMachineError vme) {
            throw vme;
        } catch (Throwable t) {
            throw new IllegalStateException("kpipe: cannot read processor " + processor.id(), t);
        }
        this.pipelined = broker != null && broker.pipelines(listenerName);
    }

    /**
     * @return the listener this processor's connections report to, or {@code null} if the plugin does not see them
     *     (its broker runs without kpipe, kpipe is off or stopped on it, or the listener is not pipelined); one
     *     volatile read. Network thread.
     */
    NetworkEventListener<Object, Object> listener() {
        return pipelined ? broker.listener() : null;
    }

    /**
     * @return whether this must be made again: its broker had no running kpipe when it was made, and a
     *     broker's kpipe started, stopped or was attached since (one volatile read)
     */
    boolean stale() {
        return generation != Interceptor.brokersGeneration() && (broker == null || broker.listener() == null);
    }

    @Override
    public String listenerName() {
        return listenerName;
    }

    @Override
    public int id() {
        return processor.id();
    }

    @Override
    public void mute(String connectionId) {
        if (isOpen(connectionId)) {
            selector.mute(connectionId);
        }
    }

    @Override
    public void unmute(String connectionId) {
        // like Processor.tryUnmuteChannel: open or closing channels
        if (isOpen(connectionId)) {
            selector.unmute(connectionId);
        }
    }

    @Override
    public boolean isOpen(String connectionId) {
        return selector.channel(connectionId) != null || selector.closingChannel(connectionId) != null;
    }

    /** @return true if the plugin owns the connection's mute state. Network thread. */
    boolean owns(String connectionId) {
        return !owned.isEmpty() && owned.contains(connectionId);
    }

    /**
     * @param connectionId a connection
     * @param pluginOwns whether the plugin owns it from now on
     */
    void own(String connectionId, boolean pluginOwns) {
        if (pluginOwns) {
            owned.add(connectionId);
        } else if (!owned.isEmpty()) {
            owned.remove(connectionId);
        }
    }

    /**
     * @param connectionId a connection
     * @return true if its channel is in Kafka's plain {@code MUTED} state (read a request, answered it, no throttle
     *     window): the state from which Kafka would unmute it now
     */
    boolean mutedOnly(String connectionId) {
        KafkaChannel c = selector.channel(connectionId);
        return c != null && c.muteState() == KafkaChannel.ChannelMuteState.MUTED;
    }

    @Override
    public void release(Object request) {
        forwarding = true;
        try {
            model.sendRequest(requestChannel, request);
        } finally {
            forwarding = false;
        }
    }

    /** @return true if the channel is this processor's open channel of its connection id */
    boolean serves(KafkaChannel channel) {
        return selector.channel(channel.id()) == channel;
    }

    @Override
    public void handBack(String connectionId, Object heldRequest) {
        own(connectionId, false);
        if (heldRequest == null) {
            unmute(connectionId); // as after a written response: Kafka's channel NOT_MUTED, readable
            return;
        }
        // The channel is MUTED (the plugin kept it so since it read the request): Kafka's state right after a read.
        try {
            HANDLE_MUTE_EVENT.invoke(processor, connectionId, KafkaChannel.ChannelMuteEvent.REQUEST_RECEIVED);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            release(heldRequest);
        }
    }

    /** As {@code Processor.processCompletedReceives} does for an exception while handling a receive. */
    private void closeAfterError(String connectionId, Throwable t) {
        LOG.error("Closing socket for {} because of error", connectionId, t);
        try {
            close(connectionId);
        } catch (RuntimeException e) {
            LOG.error("kpipe: cannot close connection {}", connectionId, e);
        }
    }

    @Override
    public void beginReauthentication(String connectionId, Reauthentication reauthentication) {
        PendingReauthentication r = (PendingReauthentication) reauthentication;
        if (!serves(r.channel()) || !r.channel().id().equals(connectionId)) {
            return; // closed meanwhile: nothing to re-authenticate
        }
        reauthenticating = true;
        try {
            if (!r.channel().maybeBeginServerReauthentication(r.handshake(), r.clock())) {
                // Cannot happen (checked when it was deferred); the handshake is gone, so the client would wait.
                HookCounters.faultOn(broker);
                throw new IllegalStateException("the broker did not begin the deferred re-authentication");
            }
        } catch (VirtualMachineError vme) {
            // Kafka closes the socket for any throwable here (processCompletedReceives); the error then goes on.
            closeAfterError(connectionId, vme);
            throw vme;
        } catch (Throwable t) {
            closeAfterError(connectionId, t);
        } finally {
            reauthenticating = false;
        }
    }

    @Override
    public void close(String connectionId) {
        try {
            CLOSE.invoke(processor, connectionId);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * @param connectionId a connection
     * @return true if the selector still has its channel, open or closing ({@code Selector.channel},
     *     {@code Selector.closingChannel}): a close of it is the first the SPI reports; false once the selector closed
     *     it (then it is among the poll's disconnections, reported by {@code processDisconnected}) or it never existed
     */
    boolean hasChannel(String connectionId) {
        return selector.channel(connectionId) != null || selector.closingChannel(connectionId) != null;
    }

    /**
     * @param connectionId a connection id
     * @return true if the selector completed reading a request of the connection in its last poll and the processor
     *     has not finished processing the completed receives (they are cleared at the end of {@code
     *     processCompletedReceives})
     */
    boolean hasCompletedReceive(String connectionId) {
        Collection<NetworkReceive> receives = selector.completedReceives();
        if (receives.isEmpty()) {
            return false;
        }
        for (NetworkReceive r : receives) {
            if (r.source().equals(connectionId)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Drops the requests read in the last poll whose connection the selector has closed since. With pipelining a
     * connection can be read while a response to it is being written; when the client resets the connection, one poll
     * can complete reading a request and then fail writing the response, and the selector closes the channel at once
     * without keeping it for its pending receive ({@code CloseMode.NOTIFY_ONLY}). {@code processCompletedReceives}
     * would then log an {@code IllegalStateException} ("removed from selector before processing completed receive")
     * for a request nobody could be answered on. Stock Kafka never meets such a receive: it mutes a connection while
     * a response to it is being written. The dropped receive's buffer goes back to the memory pool.
     *
     * @return how many receives were dropped
     */
    int dropOrphanedReceives() {
        Collection<NetworkReceive> receives = selector.completedReceives();
        if (receives.isEmpty()) {
            return 0;
        }
        int dropped = 0;
        for (Iterator<NetworkReceive> it = receives.iterator(); it.hasNext(); ) {
            NetworkReceive r = it.next();
            if (!isOpen(r.source())) {
                it.remove();
                try {
                    r.close();
                } catch (IOException e) {
                    // releasing a pooled buffer does not do I/O
                }
                dropped++;
            }
        }
        return dropped;
    }

    @Override
    public Object pollResponse() {
        Object r = responseQueue.poll();
        if (r != null) {
            try {
                model.markDequeued(r, System.nanoTime());
            } catch (RuntimeException | LinkageError e) {
                // only a request metric misses its dequeue time; the response itself must not get lost
                HookCounters.faultOn(broker);
            }
        }
        return r;
    }

    @Override
    public void discard(Object response) {
        model.discard(response);
    }

    @Override
    public void wakeup() {
        processor.wakeup();
    }

    @Override
    public boolean responsesQueued() {
        return !responseQueue.isEmpty();
    }

    @Override
    public ResponseKind kindOf(Object response) {
        return model.kindOf(response);
    }

    @Override
    public Object requestOf(Object response) {
        return model.requestOf(response);
    }

    @Override
    public RequestContext contextOf(Object request) {
        return model.contextOf(request);
    }

    @Override
    public String toString() {
        return "processor " + listenerName + "-" + processor.id();
    }
}
