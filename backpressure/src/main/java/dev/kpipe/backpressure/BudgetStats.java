// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The statistics of a {@link ByteBudget} that its admission does not depend on: the most bytes ever in use, and the
 * requests read that were at least as large as the whole budget. Lock-free; any thread.
 */
final class BudgetStats {
    private static final VarHandle PEAK;
    private static final VarHandle OVERSIZE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PEAK = l.findVarHandle(BudgetStats.class, "peak", long.class);
            OVERSIZE = l.findVarHandle(BudgetStats.class, "oversize", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The most bytes ever in use; raised by a CAS max loop. */
    private volatile long peak;
    /** Requests at least as large as the budget; incremented atomically. */
    private volatile long oversize;

    /** @param used bytes in use after a take, raising the peak if above it */
    void raisePeak(long used) {
        long p;
        while (used > (p = peak) && !PEAK.compareAndSet(this, p, used)) {
            // another thread raised it: compare again
        }
    }

    /** Counts one request at least as large as the budget. */
    void oversizeAdmitted() {
        OVERSIZE.getAndAdd(this, 1L);
    }

    /** @return the most bytes ever in use */
    long peak() {
        return peak;
    }

    /** @return requests read that were at least as large as the budget */
    long oversize() {
        return oversize;
    }
}
