// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Time;

/** A clock the test moves; starts at an arbitrary negative nano time, as {@code System.nanoTime} may. Thread-safe. */
final class FakeTime implements Time {
    private final AtomicLong nanos = new AtomicLong(-5_000_000_000L);

    void advanceMs(long ms) {
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Override
    public long milliseconds() {
        return 1_700_000_000_000L + TimeUnit.NANOSECONDS.toMillis(nanos.get());
    }

    @Override
    public long nanoseconds() {
        return nanos.get();
    }

    @Override
    public void sleep(long ms) {
        advanceMs(ms);
    }
}
