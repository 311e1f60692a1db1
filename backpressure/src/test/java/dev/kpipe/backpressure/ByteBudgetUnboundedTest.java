// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link ByteBudget#unbounded}: the budget used when {@code kpipe.max.inflight.bytes} is not configured. */
class ByteBudgetUnboundedTest {

    @Test
    void admitsEverythingAtOnceAndStillCounts() {
        ByteBudget b = ByteBudget.unbounded(() -> 0L);
        ByteBudget.Waiter w = () -> {
            throw new AssertionError("nobody waits on an unbounded budget");
        };
        assertTrue(b.tryAdmitRead(Integer.MAX_VALUE));
        assertEquals(1L << 40, b.tryReserve(w, 1L << 40));
        b.settle(1L << 40, 100);
        assertEquals(Integer.MAX_VALUE + 100L, b.used());
        assertTrue(b.tryAdmitRead(1), "never saturated");
        assertEquals(0, b.waiting());
        b.release(Integer.MAX_VALUE + 101L);
        assertEquals(0, b.used());
        assertEquals(0, b.oversizeAdmitted());
    }
}
