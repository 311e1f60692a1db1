// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
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
     * Waits, before a round, until the 1-minute load average is below {@code below}, or has stopped falling (no lower
     * than 30 s before, on two readings in a row: the level the clusters idle at, e.g. followers fetching every
     * millisecond; so at least 35 s when it is above {@code below}), or {@code max} has passed; reads it every 5 s. The last round's own client and broker threads otherwise carry into the next round's
     * start (the average decays by e in a minute). Main thread.
     *
     * @param below the load average to wait for; 0 or less: returns at once
     * @param max the longest wait
     * @param progress shows the wait
     * @return how the wait ended
     * @throws InterruptedException if interrupted while waiting
     */
    static Settled settle(double below, Duration max, Progress progress) throws InterruptedException {
        if (below <= 0) {
            return Settled.BELOW;
        }
        long start = System.nanoTime();
        progress.phase(String.format(Locale.ROOT, "waiting for the load average < %.2f", below), start, 0, null);
        Deque<Double> last30s = new ArrayDeque<>();
        int notFalling = 0;
        while (true) {
            double now = now();
            if (now < below) {
                return Settled.BELOW;
            }
            if (last30s.size() == 6) {
                notFalling = now >= last30s.removeFirst() - 0.05 ? notFalling + 1 : 0;
                if (notFalling == 2) {
                    return Settled.IDLE_LEVEL;
                }
            }
            if (System.nanoTime() - start >= max.toNanos()) {
                return Settled.TIMED_OUT;
            }
            last30s.addLast(now);
            Thread.sleep(5_000);
        }
    }

    /** How {@link #settle} ended. */
    enum Settled {
        /** below the load average asked for */
        BELOW,
        /** above it, but no longer falling: the level the machine idles at with the clusters up */
        IDLE_LEVEL,
        /** still falling when the longest wait ran out */
        TIMED_OUT
    }

    /**
     * {@link #settle}s as the options ask, then reads the load average a round starts on.
     *
     * @param o the side options ({@code --settle-load}, {@code --settle-max-s})
     * @param progress shows the wait
     * @param out where a wait that ran out is reported, on a line of its own
     * @return the load average now, to pass to {@link #around}
     * @throws InterruptedException if interrupted while waiting
     */
    static double beforeRound(SideOptions o, Progress progress, PrintStream out) throws InterruptedException {
        Settled settled = settle(o.settleLoad(), Duration.ofSeconds(o.settleMaxS()), progress);
        if (settled != Settled.BELOW) {
            progress.clear();
            out.printf(
                    Locale.ROOT,
                    settled == Settled.IDLE_LEVEL
                            ? "  (the load average stopped falling at %3$.2f, above %1$.2f: the level the clusters idle at)%n"
                            : "  (the load average stayed at or above %.2f for %d s; the round starts at %.2f)%n",
                    o.settleLoad(),
                    o.settleMaxS(),
                    now());
        }
        return now();
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
