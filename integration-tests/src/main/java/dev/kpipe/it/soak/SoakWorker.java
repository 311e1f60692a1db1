// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One soak client on its own thread ({@link SoakWorkers}): opens, loops, reopens on request; errors go to {@link
 * SoakStats}. {@link #requestRestart()} and {@link #stop()} may be called from any thread.
 */
abstract class SoakWorker implements Runnable {
    final String name;
    final SoakStats stats;
    final Map<String, Object> baseConfig;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicBoolean restart = new AtomicBoolean();
    private final Thread thread;

    SoakWorker(String name, SoakStats stats, Map<String, Object> baseConfig) {
        this.name = name;
        this.stats = stats;
        this.baseConfig = baseConfig;
        this.thread = new Thread(this, "soak-" + name);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void requestRestart() {
        restart.set(true);
    }

    /** Asks the worker to close its client and end; see {@link #join}. */
    void stop() {
        running.set(false);
    }

    /** @return whether the thread ended within the timeout */
    boolean join(Duration timeout) throws InterruptedException {
        thread.join(timeout.toMillis());
        return !thread.isAlive();
    }

    boolean running() {
        return running.get();
    }

    /** @return whether the soak's periodic round-robin restarts include this worker */
    boolean scheduledRestarts() {
        return true;
    }

    @Override
    public final void run() {
        boolean open = false;
        boolean restarting = false;
        try {
            while (running()) {
                if (restart.getAndSet(false) && open) {
                    open = false;
                    restarting = true;
                    closeQuietly();
                }
                if (!open) {
                    try {
                        open();
                        open = true;
                    } catch (RuntimeException e) {
                        stats.error(name, "creating the client failed", e);
                        pause(1000);
                        continue;
                    }
                    if (restarting) {
                        restarting = false;
                        restarted();
                    }
                }
                try {
                    step();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    stats.error(name, "unexpected failure", e);
                    pause(200);
                }
            }
        } catch (RuntimeException | Error e) {
            stats.error(name, "worker thread died", e);
        } finally {
            if (open) {
                closeQuietly();
            }
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            stats.error(name, "closing the client failed", e);
        }
    }

    /** Sleeps up to {@code ms}, returning early when stopped. */
    void pause(long ms) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        try {
            while (running() && System.nanoTime() < end) {
                TimeUnit.MILLISECONDS.sleep(
                        Math.min(50, Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop();
        }
    }

    abstract void open();

    abstract void step() throws Exception;

    abstract void close();

    abstract void restarted();
}
