// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ReservationHolders;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.ProcessorAttachment;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * kpipe's per-processor state, attached to the {@link NetworkProcessor}. Owned by the processor's
 * network thread, except {@link #dispatched}, which handler threads append to.
 */
final class ProcessorPipelines<Q, S> implements ProcessorAttachment {
    final NetworkProcessor<Q, S> processor;
    /**
     * Responses released in order (each the head of its connection), handed to the broker before
     * anything else still queued in the broker's response queue.
     */
    final ArrayDeque<S> ready = new ArrayDeque<>();
    /**
     * Connections signalled from other threads: a handler dispatched their request, the byte
     * budget admitted them, or kpipe was disabled (they must drain). Intrusive: a signal allocates nothing.
     */
    final Signals<ConnectionPipeline<Q, S>> dispatched = new Signals<>();
    /** Connections to evaluate at the next safe point. */
    final ArrayList<ConnectionPipeline<Q, S>> pending = new ArrayList<>();
    /**
     * Exactly the reservations of this processor's connections that hold bytes of the budget for their next read
     * ({@code reserved > 0}), in the order they were granted.
     */
    final ReservationHolders holders = new ReservationHolders();
    /**
     * Classic connections whose upgrade the byte budget deferred, by connection id, with the size of
     * the request that would have upgraded them (bytes): they join the budget's queue when Kafka is
     * about to unmute them.
     */
    final java.util.HashMap<String, Integer> upgradesDeferred = new java.util.HashMap<>();
    /**
     * Drained connections whose held re-authentication waits for their quiet period ({@link QuietPeriod});
     * evaluated again at the next round.
     */
    final ArrayList<ConnectionPipeline<Q, S>> awaitingQuiet = new ArrayList<>();
    /** Processor rounds (network thread loops) seen so far; network thread only. */
    long rounds;
    /**
     * The storage-side signal as read in this round ({@link StorageSignal#read()}), or {@link StorageSignal#UNREAD}:
     * read at most once per round, whatever the number of connections evaluated. Network thread only.
     */
    int roundSignal = StorageSignal.UNREAD;
    /**
     * Exactly the connections kept muted by storage-side saturation ({@link ConnectionPipeline#pressureBlocked()}),
     * evaluated again at a round once pressure may have cleared ({@code Rounds}).
     */
    final ArrayList<ConnectionPipeline<Q, S>> pressureBlocked = new ArrayList<>();
    /** A connection of {@link #pressureBlocked} was released in this round: the list is pruned at its end. */
    boolean pressureReleased;
    /** A connection waits on broker-wide saturation (not a topic's): evaluated again as soon as that clears. */
    boolean blockedGlobally;
    /** The storage source's count of clears when this processor's waiting connections were last evaluated again. */
    long pressureCheckedClears;
    /** When they were (the coordinator's clock). */
    long pressureCheckedNanos;
    /** The per-topic signal as read in this round, or {@link StorageSignal#UNREAD}. Network thread only. */
    int roundTopicSignal = StorageSignal.UNREAD;

    ProcessorPipelines(NetworkProcessor<Q, S> processor) {
        this.processor = processor;
    }

    /**
     * @param processor a processor of a pipelined listener
     * @return its kpipe state, attached on first use; network thread
     */
    @SuppressWarnings("unchecked") // kpipe attaches only its own ProcessorPipelines of the processor's types
    static <Q, S> ProcessorPipelines<Q, S> of(NetworkProcessor<Q, S> processor) {
        ProcessorAttachment a = processor.attachment();
        if (a == null) {
            ProcessorPipelines<Q, S> p = new ProcessorPipelines<>(processor);
            processor.attach(p);
            return p;
        }
        return (ProcessorPipelines<Q, S>) a;
    }
}
