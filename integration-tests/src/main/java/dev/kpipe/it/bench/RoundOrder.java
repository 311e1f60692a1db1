// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.List;

/**
 * The order of the sides within one round. Without an A/A control: stock, then kpipe, every round (as always). With
 * one (a second stock cluster, "stock-b"): odd rounds stock, kpipe, stock-b; even rounds stock-b, kpipe, stock. kpipe
 * always runs in the middle and the two stock clusters swap ends, so a drift of the machine's load over a round
 * weighs on stock and stock-b alike, and the A/A ratio stock-b/stock shows the noise that kpipe/stock is read
 * against. Stateless.
 */
final class RoundOrder {
    /** How the A/A control is named in the log, the table and the JSON. */
    static final String CONTROL_LABEL = "stock-b";

    private RoundOrder() {}

    /**
     * @param round 1-based round number
     * @param stock the stock side
     * @param kpipe the kpipe side
     * @param control the A/A control (a second stock side), or null for none
     * @param <T> what a side is (a cluster; anything in the tests)
     * @return the sides in the order they run in this round
     * @throws IllegalArgumentException if {@code round < 1}
     */
    static <T> List<T> of(int round, T stock, T kpipe, T control) {
        if (round < 1) {
            throw new IllegalArgumentException("rounds are 1-based: " + round);
        }
        if (control == null) {
            return List.of(stock, kpipe);
        }
        return round % 2 == 1 ? List.of(stock, kpipe, control) : List.of(control, kpipe, stock);
    }
}
