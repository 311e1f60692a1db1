// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.NetworkProcessor;

/**
 * Wakes a processor after a delay, so that it runs a round then (the end of a re-authentication quiet period,
 * {@link QuietPeriod}). Implementations may be called from any thread and must not block.
 */
@FunctionalInterface
public interface WakeupTimer {
    /**
     * @param processor the processor to wake ({@link NetworkProcessor#wakeup()}, any thread)
     * @param delayNanos how long from now, in ns
     */
    void wakeup(NetworkProcessor<?, ?> processor, long delayNanos);

    /**
     * @return the real timer: one daemon thread, {@code kpipe-timer}, started the first time a wake-up is asked
     *     for; a wake-up that throws is logged at DEBUG
     */
    static WakeupTimer daemon() {
        return KpipeTimer::wakeup;
    }
}
