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
    /** Responses released in order, to be handed to the broker before anything else. */
    final ArrayDeque<Object> ready = new ArrayDeque<>();
    /**
     * Connections signalled from other threads: a handler dispatched their request, or the byte
     * budget admitted them.
     */
    final ConcurrentLinkedQueue<ConnectionPipeline> dispatched = new ConcurrentLinkedQueue<>();
    /** Connections to evaluate at the next safe point. */
    final ArrayList<ConnectionPipeline> pending = new ArrayList<>();
    /** Connections kept muted only by storage-side saturation; re-evaluated every round. */
    final ArrayList<ConnectionPipeline> pressureBlocked = new ArrayList<>();

    ProcessorPipelines(NetworkProcessor processor) {
        this.processor = processor;
    }
}
