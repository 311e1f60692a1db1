// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.extension.StoragePressure;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.classify.TopicPolicy;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pipeline.WakeupTimer;
import dev.kpipe.plugin.pressure.BrokerQueuePressure;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pipelining state of one broker's kpipe, built from its settings when its hooks are installed ({@link
 * KpipeRuntime}): the coordinator the hooks report to, and what the runtime changes later (the byte budget, the
 * purgatory threshold) or publishes (the counters, its own and its hooks').
 *
 * @param coordinator the coordinator, with the classification policy and storage pressure of the settings
 * @param budget the broker-wide byte budget ({@code kpipe.max.inflight.bytes})
 * @param maxDelayedProduce the purgatory threshold ({@code kpipe.max.delayed.produce.requests}), read by the broker's
 *     queue pressure on network threads
 * @param stats the counters
 * @param hookCounters what this broker's hooks count (their faults, the receives they drop), apart from the other
 *     brokers of the JVM
 */
record PipelineState(
        PipelineCoordinator<Object, Object> coordinator,
        ByteBudget budget,
        AtomicInteger maxDelayedProduce,
        PipelineStats stats,
        HookCounters hookCounters) {

    /**
     * Builds the state for the settings; the extension instances it uses come from {@code plugins}. Takes no lock.
     *
     * @param config the settings
     * @param plugins makes (and later closes) the classification policy and the storage pressure
     * @return the state
     */
    static PipelineState build(KpipeConfig config, PluginInstances plugins) {
        PipelineStats stats = new PipelineStats();
        long budgetBytes = config.maxInflightBytes();
        ByteBudget byteBudget = new ByteBudget(budgetBytes, lowWatermark(budgetBytes), Ticker.SYSTEM);
        AtomicInteger maxDelayed = new AtomicInteger(config.maxDelayedProduceRequests());
        PipelineCoordinator<Object, Object> pipeline = new PipelineCoordinator<>(
                new RequestClassifier(new TopicPolicy(plugins.policy(config.classificationPolicy()))),
                new InflightLimits(config.maxInflightRequestsPerConnection(), config.maxInflightBytesPerConnection()),
                byteBudget,
                stats,
                Ticker.SYSTEM,
                WakeupTimer.daemon());
        for (PipelinedApi.Switch s : PipelinedApi.Switch.settings()) {
            pipeline.switchOn(s, config.isOn(s));
        }
        StoragePressure pluginPressure = plugins.pressure(config.storagePressure());
        if (pluginPressure != null) {
            pipeline.pressure(pluginPressure);
        }
        pipeline.pressureFactory(load -> new BrokerQueuePressure(load, maxDelayed::get, pluginPressure));
        return new PipelineState(pipeline, byteBudget, maxDelayed, stats, new HookCounters());
    }

    /**
     * The budget's low watermark: 90 % of its capacity (what {@code kpipe.max.inflight.bytes} documents), computed
     * without overflow for any capacity up to {@link Long#MAX_VALUE}.
     *
     * @param capacity the capacity, in bytes, at least 1
     * @return the low watermark, in bytes, in {@code [0, capacity)}
     */
    static long lowWatermark(long capacity) {
        return capacity / 10 * 9 + capacity % 10 * 9 / 10;
    }
}
