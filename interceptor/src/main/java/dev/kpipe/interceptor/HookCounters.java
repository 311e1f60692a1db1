// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What one broker's hooks counted: the throwables they caught and swallowed, and the requests they dropped because
 * their connection was closed in the poll that read them. One instance per broker (its kpipe makes it and reads it for
 * {@code plugin-fault-total} and {@code orphaned-receive-total}), reached by a hook through the broker's {@link
 * BrokerHooks#counters()}, so that brokers sharing a JVM count apart. A throwable caught before a hook knew its broker
 * is counted per JVM instead ({@link Interceptor#unattributedHookFaults()}).
 *
 * <p>Thread-safety: any thread; each count is one atomic add, no lock and no allocation.
 */
public final class HookCounters {

    private final AtomicLong faults = new AtomicLong();
    private final AtomicLong orphanedReceives = new AtomicLong();

    /** Counts a throwable a hook caught. Thread: any. */
    public void fault() {
        faults.incrementAndGet();
    }

    /** @return the throwables this broker's hooks caught and swallowed so far; thread: any */
    public long faults() {
        return faults.get();
    }

    /**
     * Counts requests dropped because their connection was closed in the poll that read them. Thread: any.
     *
     * @param count how many were dropped now (0 is a no-op)
     */
    public void orphanedReceives(int count) {
        if (count > 0) {
            orphanedReceives.addAndGet(count);
        }
    }

    /**
     * @return requests read on this broker's pipelined listeners in the same poll in which the selector closed their
     *     connection, dropped unanswered before the broker processed them (see {@code
     *     KafkaNetworkProcessor.dropOrphanedReceives}); thread: any
     */
    public long orphanedReceives() {
        return orphanedReceives.get();
    }

    /**
     * Counts a throwable a hook caught on its broker's counters, or, where the hook failed before it knew its broker,
     * on the JVM's {@link Interceptor#unattributedHookFaults()}. Thread: any.
     *
     * @param broker the broker's hooks, or {@code null} if the hook does not know them
     */
    public static void faultOn(BrokerHooks broker) {
        if (broker != null) {
            broker.counters().fault();
        } else {
            Interceptor.unattributedHookFault();
        }
    }
}
