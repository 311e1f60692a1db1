// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The load average beside every round's figures, in its line and its JSON ({@link LoadAverage}). No brokers. */
class LoadAverageTest {
    @Test
    void everyRoundLineShowsTheLoadAverageBeforeAndAfter() {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("broker_cpu_us_per_record", 12.5);
        RoundResult r = new RoundResult("S2F", Variant.STOCK, 1, 20, 20_000, 1000, 60, 2, 9, 12, 15, 3, 0, null, extra);
        assertFalse(r.line().contains("load "), "no readings, nothing printed");
        RoundResult loaded = r.withExtra(LoadAverage.around(0.52, 1.734));
        assertTrue(loaded.line().contains("  load 0.52->1.73"), loaded.line());
        assertEquals(0.52, loaded.toMap().get(LoadAverage.BEFORE));
        assertEquals(1.734, loaded.toMap().get(LoadAverage.AFTER));
        assertEquals(12.5, loaded.extra().get("broker_cpu_us_per_record"), "the other figures kept");
        assertFalse(r.extra().containsKey(LoadAverage.BEFORE), "the round itself unchanged");

        CommitResult c = new CommitResult("S6 W=100ms", CommitSide.STOCK, 1, 20, Map.of("records_per_s", 10.0), 0, null)
                .withFigures(LoadAverage.around(2.0, 3.0));
        assertTrue(c.line().contains("  load 2.00->3.00"), c.line());
        assertEquals(3.0, c.toMap().get(LoadAverage.AFTER));
    }

    @Test
    void theLoadAverageIsReadFromTheMachine() {
        assertTrue(LoadAverage.now() >= 0, "Linux has one");
    }
}
