// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

/**
 * A log-linear histogram of latencies in microseconds (HdrHistogram's bucketing with 2 significant binary digits of 7
 * bits): values below 256 us are exact, larger ones are kept with a relative error below 0.8 %. Covers 0..2^63 us.
 *
 * <p>Not thread-safe: one writer (a producer's I/O thread, in its send callbacks); read it only after that thread is
 * done (the producer is closed), which gives the needed happens-before.
 */
final class LatencyHistogram {
    private static final int SUB_BITS = 7;
    private static final int SUB = 1 << SUB_BITS;

    private final long[] counts = new long[SUB * (64 - SUB_BITS + 1)];
    private long count;
    private long sum;
    private long max;

    /**
     * @param micros a latency in microseconds; negative values count as 0
     */
    void record(long micros) {
        long v = Math.max(0, micros);
        counts[index(v)]++;
        count++;
        sum += v;
        if (v > max) {
            max = v;
        }
    }

    /**
     * Adds another histogram's counts to this one.
     *
     * @param other the histogram to add (not modified)
     */
    void add(LatencyHistogram other) {
        for (int i = 0; i < counts.length; i++) {
            counts[i] += other.counts[i];
        }
        count += other.count;
        sum += other.sum;
        max = Math.max(max, other.max);
    }

    /** @return number of recorded values */
    long count() {
        return count;
    }

    /** @return the mean in microseconds, or 0 if empty */
    double meanMicros() {
        return count == 0 ? 0 : (double) sum / count;
    }

    /** @return the largest recorded value in microseconds (exact) */
    long maxMicros() {
        return max;
    }

    /**
     * @param percentile 0 < percentile <= 100
     * @return the smallest bucket's highest value (microseconds) such that at least {@code percentile} % of the values
     *     are at or below it, capped at {@link #maxMicros()}; 0 if empty
     */
    long percentileMicros(double percentile) {
        if (count == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(percentile / 100.0 * count));
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return Math.min(highestInBucket(i), max);
            }
        }
        return max;
    }

    static int index(long v) {
        if (v < 2 * SUB) {
            return (int) v;
        }
        int e = 63 - Long.numberOfLeadingZeros(v) - SUB_BITS; // >= 1; v >>> e is in [SUB, 2 * SUB)
        return (int) (SUB * e + (v >>> e));
    }

    static long highestInBucket(int index) {
        if (index < 2 * SUB) {
            return index;
        }
        int e = index / SUB - 1;
        long m = index - (long) SUB * e;
        return ((m + 1) << e) - 1;
    }
}
