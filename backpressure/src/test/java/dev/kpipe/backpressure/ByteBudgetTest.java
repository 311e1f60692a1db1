// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class ByteBudgetTest {

    /** A connection that records its admissions. */
    private static final class Conn implements ByteBudget.Waiter {
        final String name;
        final List<String> log;
        int admissions;

        Conn(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        public void admitted() {
            admissions++;
            log.add(name);
        }
    }

    @Test
    void reservesWhileThereIsRoomAndRefusesBeyond() {
        ByteBudget b = new ByteBudget(100, 50, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        Conn a = new Conn("a", log);
        Conn c = new Conn("c", log);
        assertEquals(60, b.tryReserve(a, 60));
        assertEquals(-60, b.tryReserve(c, 60), "60 + 60 > 100: queued for 60");
        assertEquals(1, b.waiting());
        b.release(60);
        assertEquals(List.of("c"), log, "the waiter is admitted on release");
        assertEquals(60, b.used());
    }

    @Test
    void requestLargerThanTheWholeBudgetIsAdmittedAloneAndNeverWaitsForever() {
        ByteBudget b = new ByteBudget(100, 10, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        Conn small = new Conn("small", log);
        Conn huge = new Conn("huge", log);
        assertEquals(30, b.tryReserve(small, 30));
        assertEquals(-100, b.tryReserve(huge, 10_000), "queued for the whole budget");
        b.release(30);
        assertEquals(List.of("huge"), log);
        assertEquals(100, b.used(), "clamped to the capacity");
        b.settle(100, 10_000);
        assertEquals(10_000, b.used(), "the request is admitted alone, whatever its size");
        assertEquals(1, b.oversizeAdmitted());
        b.release(10_000);
        assertEquals(0, b.used());
    }

    @Test
    void aRequestReadBeforeAnyReservationIsAdmittedOnlyIfItFitsNowAndNobodyWaits() {
        ByteBudget b = new ByteBudget(100, 10, Ticker.SYSTEM);
        assertTrue(b.tryAdmitRead(60));
        assertEquals(60, b.used());
        assertFalse(b.tryAdmitRead(50), "60 + 50 exceeds the capacity");
        assertEquals(60, b.used(), "nothing charged on refusal");
        assertTrue(b.tryAdmitRead(40));
        assertEquals(100, b.used());
        assertFalse(b.tryAdmitRead(1), "saturated");
        b.release(100);

        Conn waiter = new Conn("waiter", new ArrayList<>());
        assertEquals(80, b.tryReserve(waiter, 80));
        assertEquals(-30, b.tryReserve(new Conn("queued", new ArrayList<>()), 30));
        assertFalse(b.tryAdmitRead(10), "it fits, but must not overtake a waiter");
        b.release(80);
    }

    @Test
    void aRequestReadBeforeAnyReservationLargerThanTheBudgetIsAdmittedOnlyAlone() {
        ByteBudget b = new ByteBudget(100, 10, Ticker.SYSTEM);
        assertTrue(b.tryAdmitRead(5));
        assertFalse(b.tryAdmitRead(150));
        b.release(5);
        assertTrue(b.tryAdmitRead(150));
        assertEquals(150, b.used(), "its whole size is charged");
        assertEquals(1, b.oversizeAdmitted());
        b.release(150);
        assertEquals(0, b.used());
    }

    @Test
    void waitersAreAdmittedInTheOrderTheyStartedWaiting() {
        ByteBudget b = new ByteBudget(100, 0, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        Conn holder = new Conn("holder", log);
        assertEquals(100, b.tryReserve(holder, 100));
        List<Conn> waiting = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Conn w = new Conn("w" + i, log);
            waiting.add(w);
            assertEquals(-20, b.tryReserve(w, 20));
        }
        // a newcomer with a small request must not overtake the queue
        Conn newcomer = new Conn("newcomer", log);
        b.release(100);
        assertEquals(List.of("w0", "w1", "w2", "w3", "w4"), log);
        assertEquals(-1, b.tryReserve(newcomer, 1), "budget is saturated: used=100");
        b.release(20);
        assertEquals(-1, b.tryReserve(newcomer, 1), "still saturated until the low watermark (0)");
        b.release(80);
        assertEquals(List.of("w0", "w1", "w2", "w3", "w4", "newcomer"), log);
    }

    @Test
    void hysteresisAdmitsNothingBetweenCapacityAndLowWatermark() {
        ByteBudget b = new ByteBudget(100, 40, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        Conn a = new Conn("a", log);
        Conn c = new Conn("c", log);
        assertEquals(100, b.tryReserve(a, 100));
        b.release(50);
        assertEquals(-10, b.tryReserve(c, 10), "50 > low watermark 40: saturated, though 10 more would fit");
        assertEquals(List.of(), log);
        b.release(10);
        assertEquals(List.of("c"), log, "40: no longer saturated");
    }

    @Test
    void cancelledWaiterIsNeverAdmittedAndLetsTheNextOneIn() {
        ByteBudget b = new ByteBudget(100, 0, Ticker.SYSTEM);
        List<String> log = new ArrayList<>();
        Conn a = new Conn("a", log);
        Conn gone = new Conn("gone", log);
        Conn next = new Conn("next", log);
        b.tryReserve(a, 50);
        b.tryReserve(gone, 80);
        b.tryReserve(next, 40);
        b.cancel(gone);
        assertEquals(List.of("next"), log);
        b.release(90);
        assertEquals(List.of("next"), log);
        assertEquals(0, b.used());
    }

    @Test
    void releasingMoreThanAdmittedIsABug() {
        ByteBudget b = new ByteBudget(100, 0, Ticker.SYSTEM);
        assertThrows(IllegalStateException.class, () -> b.release(1));
    }

    @Test
    void rejectsBadConfiguration() {
        assertThrows(IllegalArgumentException.class, () -> new ByteBudget(0, 0, Ticker.SYSTEM));
        assertThrows(IllegalArgumentException.class, () -> new ByteBudget(100, 100, Ticker.SYSTEM));
        assertThrows(IllegalArgumentException.class, () -> new ByteBudget(100, -1, Ticker.SYSTEM));
    }

    /** A connection driven by the property: tracks exactly what it holds. */
    private static final class Held implements ByteBudget.Waiter {
        final long capacity;
        long want;
        long reserved;
        long admitted;
        boolean waiting;

        Held(long capacity) {
            this.capacity = capacity;
        }

        @Override
        public void admitted() {
            assertTrue(waiting, "admitted only after a refused reservation");
            waiting = false;
            reserved += Math.max(1, Math.min(want, capacity));
        }
    }

    /**
     * Random reserve / settle / release / close sequences: the budget accounts exactly the bytes the
     * connections hold after every step (so it never goes negative and never leaks), and returns to
     * exactly 0 when everything is released.
     */
    @Property(seed = "1403", tries = 300)
    void accountingIsExactUnderRandomSequences(
            @ForAll("ops") List<int[]> ops, @ForAll @LongRange(min = 10, max = 1000) long capacity) {
        ByteBudget b = new ByteBudget(capacity, capacity / 2, Ticker.SYSTEM);
        Map<Integer, Held> conns = new HashMap<>();
        for (int[] op : ops) {
            Held c = conns.computeIfAbsent(op[1], i -> new Held(capacity));
            long size = op[2];
            switch (op[0]) {
                case 0 -> { // ask to read the next request
                    if (c.reserved == 0 && !c.waiting) {
                        c.want = size;
                        long got = b.tryReserve(c, size);
                        if (got > 0) {
                            c.reserved = got;
                        } else {
                            c.waiting = true;
                        }
                    }
                }
                case 1 -> { // a request was read: settle the reservation
                    if (c.reserved > 0) {
                        b.settle(c.reserved, size);
                        c.admitted += size;
                        c.reserved = 0;
                    }
                }
                case 2 -> { // all its responses written
                    b.release(c.admitted);
                    c.admitted = 0;
                }
                default -> { // closed
                    b.cancel(c);
                    c.waiting = false;
                    b.release(c.admitted + c.reserved);
                    c.admitted = 0;
                    c.reserved = 0;
                }
            }
            long held = conns.values().stream()
                    .mapToLong(h -> h.admitted + h.reserved)
                    .sum();
            assertEquals(held, b.used(), "exact accounting");
            assertTrue(b.used() >= 0);
            assertEquals(conns.values().stream().filter(h -> h.waiting).count(), b.waiting());
        }
        for (Held c : conns.values()) {
            b.cancel(c);
            c.waiting = false;
        }
        for (Held c : conns.values()) {
            b.release(c.admitted + c.reserved);
        }
        assertEquals(0, b.used(), "no leak");
        assertEquals(0, b.waiting());
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<List<int[]>> ops() {
        return net.jqwik.api.Combinators.combine(
                        net.jqwik.api.Arbitraries.integers().between(0, 3),
                        net.jqwik.api.Arbitraries.integers().between(0, 5),
                        net.jqwik.api.Arbitraries.integers().between(1, 400))
                .as((op, id, size) -> new int[] {op, id, size})
                .list()
                .ofMaxSize(200);
    }
}
