// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counters of a soak run, shared by the workers and the callbacks of their clients; thread-safe. Also the ledger of
 * what every idempotent producer incarnation sent and had acknowledged per partition, for the read-back check.
 */
final class SoakStats {
    private static final int KEPT_ERRORS = 20;

    final AtomicLong produced = new AtomicLong(); // idempotent records acknowledged
    final AtomicLong acks0Sent = new AtomicLong(); // acks=0 records handed to the producer and completed
    final AtomicLong consumed = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong producerRestarts = new AtomicLong();
    final AtomicLong shortLivedProducers = new AtomicLong(); // incarnations of the short-lived producer after its first
    final AtomicLong consumerRestarts = new AtomicLong();
    final AtomicLong adminRestarts = new AtomicLong();
    final AtomicLong adminCalls = new AtomicLong();
    final AtomicLong adminRetries = new AtomicLong();
    final AtomicLong topicsCreated = new AtomicLong();
    final AtomicLong topicsDeleted = new AtomicLong();
    final AtomicLong scratchTopics = new AtomicLong(); // names the admin worker's scratch topics, across phases
    private final List<String> firstErrors = new ArrayList<>();

    /** Sent and acknowledged counts per partition of one idempotent producer incarnation. */
    record Incarnation(int slot, int incarnation, int[] sent, AtomicIntegerArray acked) {}

    /** Incarnations by {@link #key}. */
    final Map<Long, Incarnation> ledger = new ConcurrentHashMap<>();

    static long key(int slot, int incarnation) {
        return ((long) slot << 32) | (incarnation & 0xffffffffL);
    }

    /**
     * Counts an error and keeps its description if it is among the first few.
     *
     * @param who the client, e.g. {@code producer-1}
     * @param what what failed
     * @param t the exception, or null
     */
    void error(String who, String what, Throwable t) {
        errors.incrementAndGet();
        synchronized (firstErrors) {
            if (firstErrors.size() < KEPT_ERRORS) {
                firstErrors.add(who + ": " + what + (t == null ? "" : ": " + t));
            }
        }
    }

    /** @return the first errors (at most 20), oldest first */
    List<String> firstErrors() {
        synchronized (firstErrors) {
            return List.copyOf(firstErrors);
        }
    }

    long restarts() {
        return producerRestarts.get() + consumerRestarts.get() + adminRestarts.get();
    }
}
