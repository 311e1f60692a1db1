// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

/**
 * The capacity and low watermark of a {@link ByteBudget}, replaced as one when the capacity changes, and the pure
 * functions of its state word under them. The word is {@code used << SHIFT | QUEUED? | SATURATED?}: the bytes in use
 * (below {@link #MAX_USED}), whether the budget is saturated (hysteresis), and whether the waiter queue is not empty
 * (every reservation and admitting release then takes the budget's monitor). Immutable; any thread.
 *
 * @param capacity the budget, in bytes, at least 1
 * @param lowWatermark once saturated, admit again only at or below this, in bytes, in {@code [0, capacity)}
 */
record BudgetLimits(long capacity, long lowWatermark) {

    /** Word bit: saturated, admits nothing until the bytes in use fall to the low watermark. */
    static final long SATURATED = 1L;
    /** Word bit: someone waits (or a thread holding the monitor is about to queue): take the monitor. */
    static final long QUEUED = 2L;
    /** Word bits below the bytes in use. */
    static final int SHIFT = 2;
    /** The bytes in use stay below this (2^62), kept in the upper 62 bits of the word. */
    static final long MAX_USED = 1L << 62;

    /** @throws IllegalArgumentException if out of range */
    BudgetLimits {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        if (lowWatermark < 0 || lowWatermark >= capacity) {
            throw new IllegalArgumentException("lowWatermark must be in [0, " + capacity + "): " + lowWatermark);
        }
    }

    /** @return the bytes in use in the word */
    static long usedOf(long word) {
        return word >>> SHIFT;
    }

    /** @return a wanted reservation clamped to [1, capacity], in bytes */
    long clamp(long bytes) {
        return Math.max(1, Math.min(bytes, capacity));
    }

    /** @return whether the word admits a reservation of {@code want} bytes: not saturated, and empty or room */
    boolean admits(long word, long want) {
        if ((word & SATURATED) != 0) {
            return false;
        }
        long u = usedOf(word);
        return u == 0 || want <= capacity - u; // not u + want: no overflow whatever the capacity
    }

    /**
     * @return the word after taking bytes (an admitted reservation, or what a request read exceeds its reservation
     *     by): saturated once the capacity is reached; QUEUED kept
     * @throws IllegalStateException if the bytes in use would reach {@link #MAX_USED}
     */
    long taken(long word, long bytes) {
        long u = usedOf(word) + bytes;
        if (u >= MAX_USED || u < 0) {
            throw new IllegalStateException("budget overflow: " + usedOf(word) + " + " + bytes + " bytes");
        }
        return u << SHIFT | (word & QUEUED) | ((word & SATURATED) != 0 || u >= capacity ? SATURATED : 0);
    }

    /**
     * @return the word after giving bytes back: no longer saturated at or below the low watermark; QUEUED kept
     * @throws IllegalStateException if more is given back than is in use
     */
    long released(long word, long bytes) {
        long u = usedOf(word) - bytes;
        if (u < 0) {
            throw new IllegalStateException("budget released more than it admitted: used=" + u);
        }
        boolean saturated = (word & SATURATED) != 0 && u > lowWatermark;
        return u << SHIFT | (word & QUEUED) | (saturated ? SATURATED : 0);
    }

    /** @return the word with the saturation these limits give its bytes (after a change of limits) */
    long resaturated(long word) {
        long u = usedOf(word);
        boolean saturated = ((word & SATURATED) != 0 && u > lowWatermark) || u >= capacity;
        return saturated ? word | SATURATED : word & ~SATURATED;
    }

    /**
     * The budget's invariants ({@link ByteBudget#invariantViolation()}): {@code QUEUED} is set exactly while someone
     * waits, the head of the queue does not fit now (else a wake-up was lost), and the word is saturated only above
     * the low watermark.
     *
     * @param word the state word
     * @param headBytes the bytes the head waiter is queued for, or -1 if nobody waits
     * @param waiting how many wait
     * @return a description of the first violation, or {@code null} if they hold
     */
    String violation(long word, long headBytes, int waiting) {
        if (((word & QUEUED) != 0) == (headBytes < 0)) {
            return "queued bit " + ((word & QUEUED) != 0) + " with " + waiting + " waiting";
        }
        if (headBytes >= 0 && admits(word, headBytes)) {
            return "the head waits for " + headBytes + " bytes that fit now: used=" + usedOf(word);
        }
        if ((word & SATURATED) != 0 && usedOf(word) <= lowWatermark) {
            return "saturated at used=" + usedOf(word) + " <= low watermark " + lowWatermark;
        }
        return null;
    }
}
