// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The order of the sides in a round, with and without the A/A control. */
class RoundOrderTest {
    @Test
    void withoutAControlStockThenKpipeEveryRound() {
        for (int round = 1; round <= 4; round++) {
            assertEquals(List.of("stock", "kpipe"), RoundOrder.of(round, "stock", "kpipe", null));
        }
    }

    @Test
    void withAControlKpipeRunsInTheMiddleAndTheStockSidesSwapEnds() {
        assertEquals(List.of("A", "K", "B"), RoundOrder.of(1, "A", "K", "B"));
        assertEquals(List.of("B", "K", "A"), RoundOrder.of(2, "A", "K", "B"));
        assertEquals(List.of("A", "K", "B"), RoundOrder.of(3, "A", "K", "B"));
        assertEquals(List.of("B", "K", "A"), RoundOrder.of(4, "A", "K", "B"));
    }

    @Test
    void roundsAreOneBased() {
        assertThrows(IllegalArgumentException.class, () -> RoundOrder.of(0, "A", "K", "B"));
    }
}
