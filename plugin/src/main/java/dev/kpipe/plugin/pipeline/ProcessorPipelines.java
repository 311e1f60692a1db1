package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ReservationHolders;
import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * kpipe's per-processor state, attached to the {@link NetworkProcessor}. Owned by the processor's
 * network thread, except {@link #dispatched}, which handler threads append to.
 */
final class ProcessorPipelines {
    final NetworkProcessor processor;
    /**
     * Responses released in order (each the head of its connection), handed to the broker before
     * anything else still queued in the broker's response queue.
     */
    final ArrayDeque<Object> ready = new ArrayDeque<>();
    /**
     * Connections signalled from other threads: a handler dispatched their request, the byte
     * budget admitted them, or kpipe was disabled (they must drain). Intrusive: a signal allocates nothing.
     */
    final Signals dispatched = new Signals();
    /** Connections to evaluate at the next safe point. */
    final ArrayList<ConnectionPipeline> pending = new ArrayList<>();
    /**
     * Exactly the reservations of this processor's connections that hold bytes of the budget for their next read
     * ({@code reserved > 0}), in no particular order.
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
    final ArrayList<ConnectionPipeline> awaitingQuiet = new ArrayList<>();
    /**
     * The connection whose response was last written ({@code ResponseSequencer.completed}), or {@code null}: its mute
     * event and try-unmute, which follow, find it without the connection table. Network thread only.
     */
    ConnectionPipeline lastCompleted;
    /** Processor rounds (network thread loops) seen so far; network thread only. */
    long rounds;
    /**
     * The storage-side signal as read in this round ({@link StorageSignal#read()}), or {@link StorageSignal#UNREAD}:
     * read at most once per round, whatever the number of connections evaluated. Network thread only.
     */
    int roundSignal = StorageSignal.UNREAD;
    /** Connections kept muted only by storage-side saturation; re-evaluated every round. */
    final ArrayList<ConnectionPipeline> pressureBlocked = new ArrayList<>();

    ProcessorPipelines(NetworkProcessor processor) {
        this.processor = processor;
    }

    /**
     * @param processor a processor of a pipelined listener
     * @return its kpipe state, attached on first use; network thread
     */
    static ProcessorPipelines of(NetworkProcessor processor) {
        Object a = processor.attachment();
        if (a == null) {
            ProcessorPipelines p = new ProcessorPipelines(processor);
            processor.attach(p);
            return p;
        }
        return (ProcessorPipelines) a;
    }
}
