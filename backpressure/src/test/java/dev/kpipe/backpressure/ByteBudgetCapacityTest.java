// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ByteBudget#capacity(long, long)}: {@code kpipe.max.inflight.bytes} changed at runtime. */
class ByteBudgetCapacityTest {

    private static ByteBudget.Waiter waiter(String name, List<String> log) {
        return () -> log.add(name);
    }

    @Test
    void growingAdmitsTheWaitersThatNowFitInFifoOrderAtOnce() {
        ByteBudget b = new ByteBudget(100, 90, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        assertEquals(80, b.tryReserve(waiter("holder", log), 80));
        ByteBudget.Waiter first = waiter("first", log);
        ByteBudget.Waiter second = waiter("second", log);
        ByteBudget.Waiter third = waiter("third", log);
        assertEquals(-50, b.tryReserve(first, 50));
        assertEquals(-50, b.tryReserve(second, 50));
        assertEquals(-50, b.tryReserve(third, 50));

        b.capacity(200, 180);

        assertEquals(List.of("first", "second"), log, "80 + 50 + 50 fit in 200, the third does not");
        assertEquals(180, b.used());
        assertEquals(1, b.waiting());
        assertEquals(200, b.capacity());
        assertEquals(200, b.clamp(1_000), "reservations are clamped to the new capacity");
    }

    @Test
    void growingEndsASaturationWhenTheBytesInUseAreAtOrBelowTheNewLowWatermark() {
        ByteBudget b = new ByteBudget(100, 10, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        assertEquals(100, b.tryReserve(waiter("holder", log), 100));
        b.release(40);
        assertEquals(-30, b.tryReserve(waiter("w", log), 30), "60 in use, above the low watermark 10: saturated");

        b.capacity(1000, 900);

        assertEquals(List.of("w"), log, "no longer saturated");
        assertEquals(90, b.used());
    }

    @Test
    void shrinkingBelowTheBytesInUseSaturatesUntilTheNewLowWatermark() {
        ByteBudget b = new ByteBudget(1000, 900, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        assertEquals(300, b.tryReserve(waiter("a", log), 300));

        b.capacity(200, 100);

        assertEquals(-10, b.tryReserve(waiter("w", log), 10), "300 in use >= the new capacity 200");
        b.release(150);
        assertEquals(List.of(), log, "150 in use, above the new low watermark 100: saturated, though 10 would fit");
        b.release(50);
        assertEquals(List.of("w"), log, "no longer saturated");
        assertEquals(110, b.used());
    }

    @Test
    void aWaiterQueuedBeforeAShrinkKeepsItsSizeAndIsAdmittedAloneNeverForever() {
        ByteBudget b = new ByteBudget(1000, 0, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        assertEquals(600, b.tryReserve(waiter("a", log), 600));
        ByteBudget.Waiter big = waiter("big", log);
        assertEquals(-500, b.tryReserve(big, 500), "queued for 500: what its admission takes and its caller records");

        b.capacity(100, 0);

        assertEquals(List.of(), log);
        b.release(600);
        assertEquals(List.of("big"), log, "admitted alone once the budget is empty");
        assertEquals(500, b.used(), "the size it was clamped to when it started waiting");
    }

    @Test
    void aWaiterThatFailsToQueueLeavesNoStrayQueuedBitBehind() {
        boolean[] failClock = {false};
        ByteBudget b = new ByteBudget(100, 0, () -> {
            if (failClock[0]) {
                throw new IllegalStateException("clock failed");
            }
            return 0;
        });
        List<String> log = new ArrayList<>();
        assertEquals(100, b.tryReserve(waiter("holder", log), 100));
        failClock[0] = true; // queuing reads the clock (the wait's start): it throws half-way through queuing
        assertThrows(IllegalStateException.class, () -> b.tryReserve(waiter("w", log), 10));
        failClock[0] = false;

        assertEquals(null, b.invariantViolation());
        assertEquals(0, b.waiting());
        b.release(100);
        assertEquals(true, b.tryAdmitRead(10), "a read is admitted (and does not spin on a stray bit)");
        assertEquals(10, b.used());
    }

    @Test
    void badValuesAreRejectedAndChangeNothing() {
        ByteBudget b = new ByteBudget(100, 90, Ticker.SYSTEM);
        assertThrows(IllegalArgumentException.class, () -> b.capacity(0, 0));
        assertThrows(IllegalArgumentException.class, () -> b.capacity(50, 50));
        assertThrows(IllegalArgumentException.class, () -> b.capacity(50, -1));
        assertEquals(100, b.capacity());
        assertEquals(100, b.clamp(500));
    }
}
