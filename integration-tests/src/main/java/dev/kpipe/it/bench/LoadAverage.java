// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The machine's 1-minute load average read before and after every round of every scenario, printed beside the round's
 * figures and kept in its JSON ({@code load_average_1m_before}, {@code load_average_1m_after}): a round measured on a
 * busy machine shows as such. Stateless; any thread.
 */
final class LoadAverage {
    static final String BEFORE = "load_average_1m_before";
    static final String AFTER = "load_average_1m_after";

    private LoadAverage() {}

    /** @return the 1-minute load average now, or a negative value where the platform has none */
    static double now() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /**
     * @param before the load average read before the round
     * @param after the load average read after it
     * @return the two as figures of the round
     */
    static Map<String, Double> around(double before, double after) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put(BEFORE, before);
        m.put(AFTER, after);
        return m;
    }

    /**
     * @param figures a round's figures
     * @return {@code "  load 0.52->1.73"} if they hold both readings, else ""
     */
    static String figures(Map<String, ?> figures) {
        if (figures.get(BEFORE) instanceof Number b && figures.get(AFTER) instanceof Number a) {
            return String.format(Locale.ROOT, "  load %.2f->%.2f", b.doubleValue(), a.doubleValue());
        }
        return "";
    }
}
