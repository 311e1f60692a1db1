// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.NetworkProcessor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real {@link WakeupTimer} ({@link WakeupTimer#daemon()}): one daemon thread, {@code kpipe-timer}, started the
 * first time a wake-up is asked for (the end of a re-authentication quiet period, {@link QuietPeriod}).
 *
 * <p>Thread: any; nothing blocks. A wake-up that throws is logged at DEBUG (an {@link Error} of the JVM is not caught).
 */
final class KpipeTimer {

    private static final Logger LOG = LoggerFactory.getLogger(KpipeTimer.class);

    private KpipeTimer() {}

    /** The thread, created on first use. */
    private static final class Executor {
        private static final ScheduledExecutorService EXECUTOR = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kpipe-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Wakes the processor on the {@code kpipe-timer} thread.
     *
     * @param processor the processor to wake
     * @param delayNanos how long from now, ns
     */
    static void wakeup(NetworkProcessor<?, ?> processor, long delayNanos) {
        Executor.EXECUTOR.schedule(
                () -> {
                    try {
                        processor.wakeup();
                    } catch (VirtualMachineError e) {
                        // the executor would keep it in a future nobody reads: say it, then let it end the task
                        LOG.error("kpipe: error of the JVM waking processor {}", processor.id(), e);
                        throw e;
                    } catch (Throwable e) {
                        LOG.debug("kpipe: cannot wake processor {}", processor.id(), e);
                    }
                },
                delayNanos,
                TimeUnit.NANOSECONDS);
    }
}
