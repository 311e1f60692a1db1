// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Ticker;

/**
 * Client quota throttle windows (KIP-219) on the connections kpipe owns, counted: Kafka's
 * {@code KafkaChannel.handleChannelMuteEvent} sees {@code THROTTLE_STARTED} and {@code THROTTLE_ENDED} for a
 * connection whose response carries a throttle time; kpipe keeps them per connection ({@link ThrottleWindows}, a mute
 * reason of its own) and counts {@code throttled-connections}, {@code throttle-window-total} and
 * {@code throttle-time-ms-total}.
 *
 * <p>Invariants: {@code throttled-connections} counts exactly the connections kpipe owns with at least one window
 * open; each connection's throttled time is added once per stretch with a window open (overlapping windows count
 * once), when its last window closes or when kpipe lets go of the connection ({@link #forget}).
 *
 * <p>Thread: the connection's network thread.
 */
final class Throttles {

    private final PipelineStats stats;
    private final Ticker ticker;

    /**
     * @param stats where to count
     * @param ticker the clock of the throttled time
     */
    Throttles(PipelineStats stats, Ticker ticker) {
        this.stats = stats;
        this.ticker = ticker;
    }

    /** @param conn a connection a throttle window opened on ({@code THROTTLE_STARTED}) */
    void started(ConnectionPipeline<?, ?> conn) {
        if (conn.throttleStarted(ticker.nanos())) {
            stats.throttledConnections.incrementAndGet();
            stats.waitStarted(WaitReason.THROTTLED);
        }
        stats.throttleWindows.increment();
    }

    /** @param conn a connection a throttle window closed on ({@code THROTTLE_ENDED}) */
    void ended(ConnectionPipeline<?, ?> conn) {
        account(conn.throttleEnded(ticker.nanos()));
    }

    /**
     * kpipe let go of a connection (handed back or closed): its open windows end for kpipe.
     *
     * @param throttledFor how long it had been throttled, ns, or negative if no window was open
     */
    void forgotten(long throttledFor) {
        account(throttledFor);
    }

    /** @param throttledFor the time the connection was throttled, ns, or negative if it still is (or never was) */
    private void account(long throttledFor) {
        if (throttledFor >= 0) {
            stats.throttledConnections.decrementAndGet();
            stats.throttleTimeNanos.add(throttledFor);
        }
    }
}
