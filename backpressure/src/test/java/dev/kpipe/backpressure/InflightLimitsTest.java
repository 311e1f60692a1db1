// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class InflightLimitsTest {

    @Test
    void limitsBelowOneAreRejectedNamingTheLimit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new InflightLimits(0, 1));
        assertTrue(e.getMessage().contains("maxRequests"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new InflightLimits(-3, 1));
        assertTrue(e.getMessage().contains("maxRequests"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new InflightLimits(1, 0));
        assertTrue(e.getMessage().contains("maxBytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new InflightLimits(1, Long.MIN_VALUE));
        assertTrue(e.getMessage().contains("maxBytes"), e.getMessage());
    }

    @Test
    void admitsUpToTheRequestLimit() {
        InflightLimits limits = new InflightLimits(2, Long.MAX_VALUE);
        assertTrue(limits.admitsAnother(0, 0));
        assertTrue(limits.admitsAnother(1, 100));
        assertFalse(limits.admitsAnother(2, 100), "two in flight: the third waits");
    }

    @Test
    void admitsWhileBelowTheByteLimit() {
        InflightLimits limits = new InflightLimits(16, 1000);
        assertTrue(limits.admitsAnother(1, 999));
        assertFalse(limits.admitsAnother(1, 1000));
        assertFalse(limits.admitsAnother(1, 5000));
    }

    @Test
    void aRequestLargerThanTheByteLimitIsStillReadWhenNothingIsInFlight() {
        InflightLimits limits = new InflightLimits(1, 1);
        assertTrue(limits.admitsAnother(0, 0));
        assertFalse(limits.admitsAnother(1, 10_000_000));
    }

    @Test
    void isAValue() {
        assertEquals(new InflightLimits(5, 64), new InflightLimits(5, 64));
        assertEquals(5, new InflightLimits(5, 64).maxRequests());
        assertEquals(64, new InflightLimits(5, 64).maxBytes());
    }

    @Property(seed = "1404", tries = 500)
    void admitsExactlyBelowBothLimits(
            @ForAll @IntRange(min = 1, max = 1000) int maxRequests,
            @ForAll @LongRange(min = 1, max = 1L << 40) long maxBytes,
            @ForAll @IntRange(min = 0, max = 1100) int inflight,
            @ForAll @LongRange(min = 0, max = 1L << 41) long bytes) {
        InflightLimits limits = new InflightLimits(maxRequests, maxBytes);
        assertEquals(inflight < maxRequests && bytes < maxBytes, limits.admitsAnother(inflight, bytes));
        assertTrue(limits.admitsAnother(0, 0), "an idle connection always reads its next request");
    }
}
