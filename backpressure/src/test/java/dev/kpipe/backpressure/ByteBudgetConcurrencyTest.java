// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ByteBudget} shared by four threads, as the network threads of a broker share it: random reserve / settle /
 * release / read-admission / close on fixed seeds, in rounds. At the end of every round (all threads parked at a
 * barrier) the budget must account exactly the bytes the connections hold, and no waiter may be left queued while
 * its reservation fits (a lost wake-up between a lock-free release and a waiter being queued). The interleavings vary
 * between runs; the operations and their count do not.
 */
class ByteBudgetConcurrencyTest {

    private static final int THREADS = 4;
    private static final int CONNECTIONS_PER_THREAD = 4;
    private static final int ROUNDS = 20_000;
    private static final int OPS_PER_ROUND = 10;

    /** One connection, driven by its own thread; {@link #admitted()} comes from any thread. */
    private static final class Conn implements ByteBudget.Waiter {
        final AtomicInteger grants = new AtomicInteger();
        int grantsConsumed;
        long reserved;
        long charged;
        long wanted;
        boolean waiting;

        @Override
        public void admitted() {
            grants.incrementAndGet();
        }

        /** @return bytes of the budget this connection holds, as its owner thread sees it at a barrier */
        long held() {
            long ungranted = grants.get() - grantsConsumed;
            return reserved + charged + (waiting && ungranted > 0 ? wanted : 0);
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void accountingIsExactAndNoWaiterIsStrandedUnderContention() throws Exception {
        for (long capacity : new long[] {1_000, 10_000}) {
            run(capacity);
        }
    }

    private static void run(long capacity) throws Exception {
        ByteBudget b = new ByteBudget(capacity, capacity / 2, Ticker.SYSTEM);
        List<List<Conn>> conns = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            List<Conn> mine = new ArrayList<>();
            for (int c = 0; c < CONNECTIONS_PER_THREAD; c++) {
                mine.add(new Conn());
            }
            conns.add(mine);
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier barrier = new CyclicBarrier(THREADS, () -> {
            try {
                long held = conns.stream()
                        .flatMap(List::stream)
                        .mapToLong(Conn::held)
                        .sum();
                assertEquals(held, b.used(), "exact accounting at a barrier");
                long waiting = conns.stream()
                        .flatMap(List::stream)
                        .filter(c -> c.waiting && c.grants.get() == c.grantsConsumed)
                        .count();
                assertEquals(waiting, b.waiting(), "queued in the budget exactly while waiting for a grant");
                assertTrue(b.waiting() == 0 || b.used() > 0, "a waiter stranded while the budget is empty");
                assertNull(b.invariantViolation(), "a waiter stranded while the budget has room");
                assertTrue(b.peak() >= b.used());
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        });
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            List<Conn> mine = conns.get(t);
            Random random = new Random(1403L * (t + 1) + capacity);
            threads.add(new Thread(
                    () -> {
                        try {
                            for (int round = 0; round < ROUNDS; round++) {
                                for (int i = 0; i < OPS_PER_ROUND; i++) {
                                    step(b, mine.get(random.nextInt(mine.size())), random, capacity);
                                }
                                barrier.await(10, TimeUnit.SECONDS);
                            }
                            for (Conn c : mine) {
                                close(b, c);
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            barrier.reset();
                        }
                    },
                    "budget-stress-" + t));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(15));
        }
        if (failure.get() != null) {
            throw new AssertionError("capacity " + capacity, failure.get());
        }
        assertEquals(0, b.used(), "no leak");
        assertEquals(0, b.waiting());
        for (List<Conn> mine : conns) {
            for (Conn c : mine) {
                assertEquals(c.grants.get(), c.grantsConsumed, "every grant used or released once");
            }
        }
        assertNull(failure.get());
    }

    private static void step(ByteBudget b, Conn c, Random random, long capacity) {
        long size = 1 + random.nextInt((int) (capacity / 3));
        switch (random.nextInt(6)) {
            case 0, 1 -> { // ask to read the next request (or take the grant that arrived)
                if (c.waiting) {
                    if (c.grants.get() > c.grantsConsumed) {
                        c.grantsConsumed++;
                        c.waiting = false;
                        c.reserved = c.wanted;
                    }
                } else if (c.reserved == 0) {
                    long got = b.tryReserve(c, size);
                    if (got > 0) {
                        assertEquals(b.clamp(size), got);
                        c.reserved = got;
                    } else {
                        c.waiting = true;
                        c.wanted = -got;
                    }
                }
            }
            case 2 -> { // a request was read: its actual size settles the reservation
                if (c.reserved > 0) {
                    long actual = random.nextInt(8) == 0 ? capacity + size : size;
                    b.settle(c.reserved, actual);
                    c.charged += actual;
                    c.reserved = 0;
                }
            }
            case 3 -> { // its responses were written
                b.release(c.charged);
                c.charged = 0;
            }
            case 4 -> { // a request read before any reservation (an upgrade)
                if (random.nextInt(4) == 0 && b.tryAdmitRead(size)) {
                    c.charged += size;
                }
            }
            default -> {
                if (random.nextInt(4) == 0) {
                    close(b, c);
                }
            }
        }
    }

    /** As {@link Reservations#release}: a waiter admitted meanwhile holds its grant, which is released. */
    private static void close(ByteBudget b, Conn c) {
        if (c.waiting) {
            c.waiting = false;
            if (!b.cancel(c)) {
                c.grantsConsumed++;
                b.release(c.wanted);
            }
        } else if (c.grants.get() > c.grantsConsumed) {
            throw new AssertionError("a grant arrived for a connection that was not waiting");
        }
        b.release(c.reserved + c.charged);
        c.reserved = 0;
        c.charged = 0;
    }
}
