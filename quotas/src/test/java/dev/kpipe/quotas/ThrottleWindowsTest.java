// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.quotas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class ThrottleWindowsTest {

    @Test
    void startsUnthrottled() {
        ThrottleWindows w = new ThrottleWindows();
        assertFalse(w.throttled());
        assertEquals(0, w.open());
    }

    @Test
    void overlappingWindowsKeepItThrottledUntilTheLastEnds() {
        ThrottleWindows w = new ThrottleWindows();
        w.start();
        w.start();
        assertEquals(2, w.open());
        assertTrue(w.end());
        assertTrue(w.throttled(), "one window still open");
        assertTrue(w.end());
        assertFalse(w.throttled());
    }

    @Test
    void anEndWithoutAStartIsIgnored() {
        ThrottleWindows w = new ThrottleWindows();
        assertFalse(w.end(), "a window that started before kpipe owned the connection");
        assertEquals(0, w.open());
        w.start();
        assertTrue(w.throttled(), "the unmatched end did not cancel a later start");
    }

    /** true = a window starts, false = one ends. */
    @Property(seed = "1402", tries = 500)
    void throttledExactlyWhileMoreWindowsStartedThanMatchedEnds(@ForAll @Size(max = 100) List<Boolean> starts) {
        ThrottleWindows w = new ThrottleWindows();
        int open = 0;
        for (boolean start : starts) {
            if (start) {
                w.start();
                open++;
            } else {
                assertEquals(open > 0, w.end());
                open = Math.max(0, open - 1);
            }
            assertEquals(open, w.open());
            assertEquals(open > 0, w.throttled());
        }
    }
}
