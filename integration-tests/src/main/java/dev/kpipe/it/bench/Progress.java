// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The progress line on stderr: scenario, round, variant, phase, seconds into the phase, records acknowledged so far,
 * total elapsed time. On a terminal it is one line redrawn every second; otherwise a line every 10 s.
 *
 * <p>Thread-safe: the benchmark thread sets the state, a daemon thread prints it.
 */
final class Progress implements AutoCloseable {
    private final PrintStream err;
    private final boolean tty;
    private final long started = System.nanoTime();
    private final Thread printer;
    private volatile String context = "";
    private volatile String phase = "";
    private volatile long phaseStart = System.nanoTime();
    private volatile int phaseSeconds;
    private volatile LongSupplier counter;
    private volatile boolean shown;

    /**
     * @param err where to print (stderr)
     * @param tty whether {@code err} is a terminal (redraw one line with carriage returns)
     */
    Progress(PrintStream err, boolean tty) {
        this.err = err;
        this.tty = tty;
        this.printer = new Thread(this::loop, "bench-progress");
        printer.setDaemon(true);
        printer.start();
    }

    /**
     * @param context e.g. {@code S1 W=100ms round 2/5 kpipe}
     */
    void context(String context) {
        this.context = context;
        phase("", System.nanoTime(), 0, null);
    }

    /**
     * @param phase e.g. {@code measuring}
     * @param startNanos when it started ({@link System#nanoTime()})
     * @param seconds its planned length, 0 if open
     * @param acked records acknowledged so far, or null
     */
    void phase(String phase, long startNanos, int seconds, LongSupplier acked) {
        this.phase = phase;
        this.phaseStart = startNanos;
        this.phaseSeconds = seconds;
        this.counter = acked;
    }

    /** Erases the progress line (terminal) so that a normal line can be printed. Call from the benchmark thread. */
    synchronized void clear() {
        if (tty && shown) {
            err.print("\r\033[K");
            err.flush();
            shown = false;
        }
    }

    /** @return seconds since the benchmark started */
    long elapsedSeconds() {
        return (System.nanoTime() - started) / 1_000_000_000L;
    }

    private String line() {
        long inPhase = Math.max(0, (System.nanoTime() - phaseStart) / 1_000_000_000L);
        StringBuilder sb = new StringBuilder("[bench ")
                .append(fmt(elapsedSeconds()))
                .append("] ")
                .append(context);
        if (!phase.isEmpty()) {
            sb.append(": ").append(phase).append(' ').append(inPhase);
            if (phaseSeconds > 0) {
                sb.append('/').append(phaseSeconds);
            }
            sb.append(" s");
        }
        LongSupplier c = counter;
        if (c != null) {
            sb.append(String.format(Locale.ROOT, ", %,d records acked", c.getAsLong()));
        }
        return sb.toString();
    }

    private static String fmt(long s) {
        return String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }

    private void loop() {
        long n = 0;
        while (true) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            n++;
            if (context.isEmpty()) {
                continue;
            }
            synchronized (this) {
                if (tty) {
                    err.print("\r\033[K" + line());
                    shown = true;
                    err.flush();
                } else if (n % 10 == 0) {
                    err.println(line());
                }
            }
        }
    }

    /** Stops printing and erases the line; idempotent, any thread. */
    void stop() {
        printer.interrupt();
        clear();
    }

    @Override
    public void close() {
        stop();
    }
}
