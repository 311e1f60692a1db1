package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link WakeupGate} against a model of {@code Processor.run}: the round takes the signals, the poll blocks until
 * woken (a binary permit, as the NIO selector's wake-up), and no signal may wait in a blocked poll.
 */
class WakeupGateTest {

    @Test
    void wakesOnlyOutsideTheAwakeWindow() {
        WakeupGate gate = new WakeupGate();
        assertTrue(gate.needsWakeup(), "before the first poll returns");
        gate.pollReturned();
        assertFalse(gate.needsWakeup(), "between the poll and the round");
        gate.beforePoll();
        assertTrue(gate.needsWakeup(), "from the last round before the poll on, through the poll");
        gate.pollReturned();
        assertFalse(gate.needsWakeup());
    }

    /**
     * Two signalling threads against one network thread, 20,000 signals each (pauses from fixed seeds). A poll that
     * blocks for a whole second while a signal is pending is a lost wake-up (each poll waits at most that long, so a
     * broken gate fails here rather than hanging).
     */
    @Test
    void noSignalWaitsInABlockedPoll() throws Exception {
        WakeupGate gate = new WakeupGate();
        Semaphore selector = new Semaphore(0);
        AtomicLong pending = new AtomicLong(); // signals published, not yet taken by a round
        AtomicInteger lost = new AtomicInteger();
        int perThread = 20_000;
        int signallers = 2;
        Thread[] threads = new Thread[signallers];
        for (int t = 0; t < signallers; t++) {
            Random random = new Random(42 + t);
            threads[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    pending.incrementAndGet(); // the signal, published by a volatile write
                    if (gate.needsWakeup() && selector.availablePermits() == 0) {
                        selector.release();
                    }
                    if (random.nextInt(8) == 0) {
                        LockSupport.parkNanos(random.nextInt(20_000));
                    }
                }
            });
            threads[t].start();
        }
        long taken = 0;
        long total = (long) perThread * signallers;
        while (taken < total) {
            taken += pending.getAndSet(0); // processNewResponses enter: a round takes the signals
            gate.beforePoll(); // its exit: then the exit's round
            taken += pending.getAndSet(0);
            if (taken == total) {
                break;
            }
            boolean woken = selector.tryAcquire(1, TimeUnit.SECONDS); // poll
            selector.drainPermits(); // the selector clears its wake-up after a poll
            if (!woken && pending.get() > 0) {
                lost.incrementAndGet();
            }
            gate.pollReturned(); // processCompletedReceives
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(0, lost.get(), "polls that slept through a pending signal");
        assertEquals(total, taken);
    }
}
