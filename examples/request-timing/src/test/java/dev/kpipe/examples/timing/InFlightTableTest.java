// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The table under the race it is built for: each request's dispatch and write on two threads at once. */
class InFlightTableTest {

    @Test
    void eachRequestIsCompletedExactlyOnceWhicheverOfItsTwoEventsComesFirst() throws Exception {
        int requests = 20_000;
        InFlightTable table = new InFlightTable(4096, 0, Long.MAX_VALUE / 4);
        AtomicLong clock = new AtomicLong(1);
        AtomicLong completed = new AtomicLong();
        AtomicLong writtenFirst = new AtomicLong();
        AtomicLong untracked = new AtomicLong();
        Random random = new Random(32); // fixed seed: which request runs its events in which order
        List<Object> batch = new ArrayList<>();
        for (int i = 0; i < requests; i += 32) {
            batch.clear();
            for (int j = 0; j < 32; j++) {
                Object r = new Object();
                if (table.read(r, clock.incrementAndGet()) != 0) {
                    untracked.incrementAndGet();
                    continue;
                }
                batch.add(r);
            }
            List<Object> order = new ArrayList<>(batch);
            Collections.shuffle(order, random);
            CyclicBarrier start = new CyclicBarrier(2);
            Thread handler = new Thread(() -> {
                await(start);
                for (Object r : batch) {
                    long a = table.dispatched(r, clock.incrementAndGet());
                    if (a != InFlightTable.UNTRACKED && InFlightTable.writtenFirst(a)) {
                        writtenFirst.incrementAndGet();
                        completed.incrementAndGet();
                    }
                }
            });
            handler.start();
            await(start);
            for (Object r : order) {
                long w = table.written(r, clock.incrementAndGet());
                if (w >= 0) {
                    completed.incrementAndGet();
                }
            }
            handler.join();
        }
        assertEquals(0, untracked.get(), "4,096 slots hold a batch of 32 (16 probes each)");
        assertEquals(requests, completed.get(), "each request completed once");
        assertEquals(0, table.inFlight(), "every slot free at the end");
        System.out.printf("%d requests, %d written before their dispatch%n", requests, writtenFirst.get());
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
