// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pressure;

import dev.kpipe.extension.StoragePressure;
import dev.kpipe.spi.BrokerLoad;
import java.util.function.IntSupplier;

/**
 * The default storage-side signal: the broker is saturated while its request queue is at least
 * {@value #QUEUE_FULL_PERCENT}% full ({@code queued.max.requests}; beyond it the network threads
 * would block putting requests), or while more than a configured number of produce requests wait
 * for acks in the produce purgatory; optionally also while a storage plugin's own signal says so, broker-wide or per
 * topic (its per-topic answers and its wake-up are passed through). Thread-safe, allocation-free.
 */
public final class BrokerQueuePressure implements StoragePressure {
    /** Request queue fill, in percent of its capacity, at which the broker counts as saturated. */
    public static final int QUEUE_FULL_PERCENT = 80;

    private final BrokerLoad load;
    private final int queueThreshold;
    private final IntSupplier maxDelayedProduce;
    private final StoragePressure plugin;

    /**
     * @param load the broker's queue gauges
     * @param maxDelayedProduce purgatory threshold; 0 disables the purgatory check
     * @param plugin a storage plugin's signal, or {@code null}
     */
    public BrokerQueuePressure(BrokerLoad load, int maxDelayedProduce, StoragePressure plugin) {
        this(load, () -> maxDelayedProduce, plugin);
    }

    /**
     * @param load the broker's queue gauges
     * @param maxDelayedProduce the purgatory threshold ({@code kpipe.max.delayed.produce.requests}), read at every
     *     check so that a change at runtime applies at once; 0 disables the purgatory check. Called on network
     *     threads: must be cheap and thread-safe (a volatile read)
     * @param plugin a storage plugin's signal, or {@code null}
     */
    public BrokerQueuePressure(BrokerLoad load, IntSupplier maxDelayedProduce, StoragePressure plugin) {
        this.load = load;
        this.queueThreshold = Math.max(1, load.requestQueueCapacity() * QUEUE_FULL_PERCENT / 100);
        this.maxDelayedProduce = maxDelayedProduce;
        this.plugin = plugin;
    }

    @Override
    public boolean saturated() {
        int maxDelayed = maxDelayedProduce.getAsInt();
        return load.requestQueueSize() >= queueThreshold
                || (maxDelayed > 0 && load.delayedProduceRequests() > maxDelayed)
                || (plugin != null && plugin.saturated());
    }

    @Override
    public boolean anyTopicSaturated() {
        return plugin != null && plugin.anyTopicSaturated();
    }

    @Override
    public boolean saturated(String topic) {
        return plugin != null && plugin.saturated(topic);
    }

    @Override
    public void onCleared(Runnable listener) {
        if (plugin != null) {
            plugin.onCleared(listener);
        }
    }
}
