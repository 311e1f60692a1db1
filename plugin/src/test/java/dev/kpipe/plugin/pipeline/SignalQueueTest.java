// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link SignalQueue}: the intrusive handler-to-network-thread signal. */
class SignalQueueTest {

    private final ProcessorPipelines<Object, Object> processor = new ProcessorPipelines<>(null);
    private final PipelineStats stats = new PipelineStats();

    private ConnectionPipeline<Object, Object> conn(int i) {
        return new ConnectionPipeline<>("c" + i, processor, stats, () -> 0L, 0);
    }

    @Test
    void connectionsAreTakenInTheOrderTheyWereFirstSignalledOnceEach() {
        SignalQueue<ConnectionPipeline<Object, Object>> s = new SignalQueue<>();
        ConnectionPipeline<Object, Object> a = conn(0);
        ConnectionPipeline<Object, Object> b = conn(1);
        ConnectionPipeline<Object, Object> c = conn(2);
        assertTrue(s.isEmpty());
        s.add(a);
        s.add(b);
        s.add(a); // listed already: one evaluation for both signals
        s.add(c);
        assertEquals(3, s.size());
        assertSame(a, s.poll());
        s.add(a); // taken: listed again, after the others
        s.add(b); // b is still listed (taken from the stack, not handed out)
        assertSame(b, s.poll());
        assertSame(c, s.poll());
        assertSame(a, s.poll());
        assertNull(s.poll());
        assertTrue(s.isEmpty());
    }

    @Test
    void signalsFromManyThreadsAreEachFollowedByATake() throws Exception {
        SignalQueue<ConnectionPipeline<Object, Object>> s = new SignalQueue<>();
        int threads = 4;
        int perThread = 20_000;
        List<ConnectionPipeline> conns = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            conns.add(conn(i));
        }
        Map<ConnectionPipeline, long[]> takes = new IdentityHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean done = new AtomicBoolean();
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int tt = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int k = 0; k < perThread; k++) {
                    int i = (k * 7 + tt) % conns.size();
                    s.add(conns.get(i));
                }
            });
            producers.add(th);
            th.start();
        }
        start.countDown();
        int taken = 0;
        while (!done.get()) {
            boolean alive = producers.stream().anyMatch(Thread::isAlive);
            ConnectionPipeline<Object, Object> c;
            while ((c = s.poll()) != null) {
                taken++;
                takes.computeIfAbsent(c, x -> new long[1])[0]++;
            }
            if (!alive) {
                done.set(true);
            }
        }
        for (Thread th : producers) {
            th.join();
        }
        assertNull(s.poll(), "every signal was followed by a take");
        assertTrue(s.isEmpty());
        assertEquals(conns.size(), takes.size(), "every connection signalled was taken");
        assertTrue(taken <= threads * perThread, "at most one take per signal: " + taken);
        for (ConnectionPipeline<Object, Object> c : conns) {
            assertFalse(SignalQueue.listed(c), "unlisted after the last take");
        }
    }
}
