package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;

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
     * budget admitted them, or kpipe was disabled (they must drain).
     */
    final ConcurrentLinkedQueue<ConnectionPipeline> dispatched = new ConcurrentLinkedQueue<>();
    /** Connections to evaluate at the next safe point. */
    final ArrayList<ConnectionPipeline> pending = new ArrayList<>();
    /**
     * Exactly the connections holding a byte-budget reservation for their next read ({@code reserved > 0}), in no
     * particular order; each knows its index ({@link ConnectionPipeline#holderIndex}).
     */
    final ArrayList<ConnectionPipeline> holders = new ArrayList<>();
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
    /** Processor rounds (network thread loops) seen so far; network thread only. */
    long rounds;
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

    /** Lists a connection that now holds a reservation; no-op if listed. Network thread only. */
    void addHolder(ConnectionPipeline conn) {
        if (conn.holderIndex < 0) {
            conn.holderIndex = holders.size();
            holders.add(conn);
        }
    }

    /**
     * Unlists a connection that no longer holds a reservation, in O(1) (the last one takes its index); no-op if not
     * listed. Network thread only.
     */
    void removeHolder(ConnectionPipeline conn) {
        int i = conn.holderIndex;
        if (i < 0) {
            return;
        }
        ConnectionPipeline last = holders.remove(holders.size() - 1);
        if (last != conn) {
            holders.set(i, last);
            last.holderIndex = i;
        }
        conn.holderIndex = -1;
    }
}
