// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

/**
 * Paces one sender at a fixed offered load: record {@code n} (0-based) is due at {@code start + n / rate}, so the
 * number sent by any time is fixed by the schedule, not by how fast the broker answers (an open-loop load, as in
 * {@code kafka-producer-perf-test --throughput}, whose {@code ThroughputThrottler} sleeps instead of counting due
 * records). A sender that falls behind (a GC pause, a full {@code buffer.memory}) sends the overdue records at once,
 * so the offered count over a window stays {@code rate x window} whatever the pauses.
 *
 * <p>Pure arithmetic on {@link System#nanoTime()}-style values passed in by the caller; not thread-safe (one sending
 * thread owns it).
 */
final class RatePacer {
    private final long startNanos;
    private final double recordsPerSec;
    private long issued;

    /**
     * @param recordsPerSec offered records per second, > 0
     * @param startNanos when record 0 is due, in {@code System.nanoTime()} nanoseconds
     * @throws IllegalArgumentException if the rate is not positive and finite
     */
    RatePacer(double recordsPerSec, long startNanos) {
        if (!(recordsPerSec > 0) || Double.isInfinite(recordsPerSec)) {
            throw new IllegalArgumentException("records/s must be positive and finite: " + recordsPerSec);
        }
        this.recordsPerSec = recordsPerSec;
        this.startNanos = startNanos;
    }

    /**
     * Takes the records due by {@code nowNanos} and not yet taken: the caller sends exactly that many.
     *
     * @param nowNanos the current {@code System.nanoTime()}
     * @return records to send now, ≥ 0 (0 before {@code startNanos})
     */
    long take(long nowNanos) {
        long dueTotal = dueBy(nowNanos);
        long n = Math.max(0, dueTotal - issued);
        issued += n;
        return n;
    }

    /** @return records taken so far */
    long issued() {
        return issued;
    }

    /** @return when the next record not yet taken is due, in {@code System.nanoTime()} nanoseconds */
    long nextDueNanos() {
        return startNanos + (long) Math.ceil(issued * 1e9 / recordsPerSec);
    }

    /** @return records due in [start, now]: record n is due at start + n/rate, so 1 at start, floor(t x rate) + 1 by t */
    private long dueBy(long nowNanos) {
        long elapsed = nowNanos - startNanos;
        if (elapsed < 0) {
            return 0;
        }
        return (long) Math.floor(elapsed * recordsPerSec / 1e9) + 1;
    }
}
