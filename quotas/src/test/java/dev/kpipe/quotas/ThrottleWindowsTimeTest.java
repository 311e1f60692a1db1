// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.quotas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How long a connection was throttled: first window opening to last window closing, overlaps once. */
class ThrottleWindowsTimeTest {

    @Test
    void overlappingWindowsCountOnce() {
        ThrottleWindows w = new ThrottleWindows();
        assertTrue(w.started(100), "the first window throttles the connection");
        assertFalse(w.started(150), "a second one overlaps");
        assertEquals(-1, w.ended(200), "one is still open");
        assertEquals(300, w.throttledFor(400));
        assertEquals(400, w.ended(500), "from 100 to 500");
        assertEquals(-1, w.ended(600), "an end without a start is ignored");
        assertEquals(-1, w.throttledFor(700));
        assertTrue(w.started(800));
        assertEquals(50, w.throttledFor(850));
    }
}
