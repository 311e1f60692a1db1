// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.NetworkProcessor;
import java.util.Arrays;

/**
 * kpipe's state of each network processor of one broker, found from {@link NetworkProcessor#id()} (Kafka's {@code
 * SocketServer} numbers its processors from 0, one counter per broker, a new id for each processor a reconfiguration
 * of {@code num.network.threads} adds). One table per coordinator, so per broker, never static.
 *
 * <p>A slot holds the state of the processor object last seen with that id: a look-up compares the object, so a
 * different processor with the same id (a binding that numbers per listener, a processor made again for the same
 * Kafka processor, a test's stubs) is never given another's state. A new processor replaces the state of an earlier
 * one of its listener with the same id (that one is gone: ids are unique per broker); one of another listener gets
 * its own entry. Kafka never reuses an id, so the entry of a processor a reconfiguration removed stays (its queues
 * hold at most what its last round left): the table is bounded by the processors the broker ever made.
 *
 * <p>Threads: {@link #of} and {@link #peek} on the processor's network thread, one volatile read and no allocation
 * once the processor is known; a first look-up copies the table under a lock (copy on write: a published array is
 * never written).
 */
final class ProcessorTable<Q, S> {
    @SuppressWarnings("unchecked") // generic array
    private volatile ProcessorPipelines<Q, S>[][] byId = new ProcessorPipelines[0][];

    private final Object lock = new Object();

    /**
     * @param processor a processor of a pipelined listener
     * @return its kpipe state, made on first use; network thread
     */
    ProcessorPipelines<Q, S> of(NetworkProcessor<Q, S> processor) {
        ProcessorPipelines<Q, S> p = peek(processor);
        return p != null ? p : add(processor);
    }

    /**
     * @param processor a processor
     * @return its kpipe state, or {@code null} if kpipe never pipelined a connection of it; network thread
     */
    ProcessorPipelines<Q, S> peek(NetworkProcessor<Q, S> processor) {
        int id = processor.id();
        ProcessorPipelines<Q, S>[][] table = byId;
        if (id >= 0 && id < table.length) {
            ProcessorPipelines<Q, S>[] slot = table[id];
            for (int i = 0; i < slot.length; i++) {
                if (slot[i].processor() == processor) {
                    return slot[i];
                }
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked") // generic arrays
    private ProcessorPipelines<Q, S> add(NetworkProcessor<Q, S> processor) {
        int id = processor.id();
        if (id < 0) {
            throw new IllegalArgumentException("processor id " + id + " < 0: " + processor);
        }
        synchronized (lock) {
            ProcessorPipelines<Q, S> known = peek(processor);
            if (known != null) {
                return known;
            }
            ProcessorPipelines<Q, S>[][] table = byId;
            ProcessorPipelines<Q, S>[][] next = Arrays.copyOf(table, Math.max(table.length, id + 1));
            for (int i = table.length; i < next.length; i++) {
                next[i] = new ProcessorPipelines[0];
            }
            ProcessorPipelines<Q, S>[] slot = next[id];
            ProcessorPipelines<Q, S>[] kept = new ProcessorPipelines[slot.length + 1];
            int n = 0;
            for (ProcessorPipelines<Q, S> other : slot) {
                if (!other.processor().listenerName().equals(processor.listenerName())) {
                    kept[n++] = other;
                }
            }
            ProcessorPipelines<Q, S> p = new ProcessorPipelines<>(processor);
            kept[n++] = p;
            next[id] = Arrays.copyOf(kept, n);
            byId = next;
            return p;
        }
    }
}
