// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.spi.NetworkProcessor;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The settings Kafka's dynamic broker config can alter while connections are pipelined ({@code kpipe.enable}, the
 * per-connection limits {@code kpipe.max.inflight.requests.per.connection} and
 * {@code kpipe.max.inflight.bytes.per.connection}), as the network threads read them.
 *
 * <p>Invariants: a change is picked up by each connection at its next evaluation, never in the middle of one (the
 * fields are volatile, read once per evaluation); {@link #enabled(boolean, ConnectionTable) enabled(false)} makes every connection
 * kpipe owns evaluated at its processor's next round, where it starts to drain.
 *
 * <p>Thread: any (Kafka calls the setters on its config thread); nothing blocks.
 */
final class DynamicSettings {

    private volatile InflightLimits limits;
    /** {@code kpipe.enable}: false stops upgrades and drains every pipelined connection. */
    private volatile boolean enabled = true;

    /** @param limits the per-connection in-flight limits at start */
    DynamicSettings(InflightLimits limits) {
        this.limits = limits;
    }

    /** @return the per-connection limits in force */
    InflightLimits limits() {
        return limits;
    }

    /** @param limits the new per-connection limits */
    void limits(InflightLimits limits) {
        this.limits = limits;
    }

    /** @return whether pipelining is on */
    boolean enabled() {
        return enabled;
    }

    /**
     * Turns pipelining on or off. Off: every connection kpipe owns is queued for evaluation at its processor's next
     * round (each processor is woken once), where it starts to drain; this does not wait for the drains.
     *
     * @param enabled the new value
     * @param connections the connections kpipe owns
     */
    <Q, S> void enabled(boolean enabled, ConnectionTable<Q, S> connections) {
        this.enabled = enabled;
        if (enabled) {
            return;
        }
        // Every connection kpipe owns is evaluated at its processor's next round, where it starts to drain. One that
        // is upgraded concurrently with this call is put in the map before its first request is dispatched, and is
        // evaluated after that dispatch, by which time it reads enabled == false.
        Set<NetworkProcessor<Q, S>> woken = Collections.newSetFromMap(new IdentityHashMap<>());
        for (ConnectionPipeline<Q, S> conn : connections.values()) {
            conn.signalled();
            if (woken.add(conn.processor())) {
                conn.processor().wakeup();
            }
        }
    }
}
