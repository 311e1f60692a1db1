// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.function.LongPredicate;

/**
 * The FIFO of the connections waiting for a {@link ByteBudget}, and its wait statistics. Guarded by the budget's
 * monitor; the volatile counters are written under it and read without it.
 */
final class BudgetWaiters {

    /** A queued reservation: its waiter, its size (bytes, clamped when it started waiting), since when (ns). */
    private record Entry(ByteBudget.Waiter waiter, long bytes, long sinceNanos) {}

    private static final ByteBudget.Waiter[] NONE = new ByteBudget.Waiter[0];

    private final ArrayDeque<Entry> queue = new ArrayDeque<>();
    /** The clock of the wait times. */
    private final Ticker ticker;
    /**
     * {@code queue.size()}, written after each change of the queue: a network thread asks every round whether anyone
     * waits ({@link ByteBudget#waiting()}), and must not take the monitor for that while nobody does.
     */
    volatile int size;
    /** Waits started since creation. */
    volatile long started;
    /** Total time admitted waiters waited, ns. */
    volatile long waitNanosTotal;

    BudgetWaiters(Ticker ticker) {
        this.ticker = ticker;
    }

    /** @return the bytes the head waits for, or -1 if nobody waits */
    long headBytes() {
        Entry head = queue.peekFirst();
        return head == null ? -1 : head.bytes();
    }

    /** @return the bytes the waiter is queued for, or 0 if it is not queued */
    long bytesOf(ByteBudget.Waiter waiter) {
        for (Entry e : queue) {
            if (e.waiter() == waiter) {
                return e.bytes();
            }
        }
        return 0;
    }

    /** Queues the waiter at the tail for the bytes; a wait starts now. */
    void add(ByteBudget.Waiter waiter, long bytes) {
        queue.addLast(new Entry(waiter, bytes, ticker.nanos()));
        size = queue.size();
        started++;
    }

    /** @return true if the waiter was queued (and is no longer) */
    boolean remove(ByteBudget.Waiter waiter) {
        boolean removed = queue.removeIf(e -> e.waiter() == waiter);
        size = queue.size();
        return removed;
    }

    /**
     * Admits waiters from the head, in FIFO order, while {@code take} grants the head's bytes.
     *
     * @param take takes the bytes from the budget if it admits them now
     * @return the waiters admitted, in order (to be told with no lock held)
     */
    ByteBudget.Waiter[] admit(LongPredicate take) {
        int n = 0;
        ByteBudget.Waiter[] out = null;
        Entry head;
        while ((head = queue.peekFirst()) != null && take.test(head.bytes())) {
            queue.pollFirst();
            size = queue.size();
            waitNanosTotal += ticker.nanos() - head.sinceNanos();
            if (out == null) {
                out = new ByteBudget.Waiter[Math.min(queue.size() + 1, 16)];
            } else if (n == out.length) {
                out = Arrays.copyOf(out, n * 2);
            }
            out[n++] = head.waiter();
        }
        return out == null ? NONE : (n == out.length ? out : Arrays.copyOf(out, n));
    }
}
