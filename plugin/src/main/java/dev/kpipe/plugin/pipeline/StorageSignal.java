// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.extension.StoragePressure;
import dev.kpipe.spi.BrokerLoad;
import dev.kpipe.spi.NetworkProcessor;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage-side saturation signal ({@link StoragePressure}): while it reports the broker saturated no pipelined
 * connection is unmuted; while it reports a topic saturated, no pipelined connection whose last produce named that
 * topic is. Kafka's own analogue is the request queue bound ({@code queued.max.requests}) that blocks
 * {@code RequestChannel.sendRequest}; kpipe reads the broker's queue gauges once they are available
 * ({@link #onBrokerLoad}), and a {@code kpipe.storage.pressure.class} set with {@link #set}.
 *
 * <p>Wake-up: the processors with connections kept waiting register here ({@link #waiting}); when the source reports
 * that pressure cleared ({@link StoragePressure#onCleared}) each is woken, so its waiting connections are evaluated at
 * once rather than at its next round.
 *
 * <p>Invariants: no method throws on a network thread (a throwable of the source is counted in
 * {@code plugin-fault-total} and read as {@link #FAULT}); until a source is set it reads {@link #CLEAR}
 * ({@link StoragePressure#NONE}).
 *
 * <p>Thread: {@link #set}, {@link #factory}, {@link #onBrokerLoad} and the wake-up on any thread (volatile, a concurrent
 * set); the reads and {@link #waiting} on network threads.
 */
final class StorageSignal {

    private static final Logger LOG = LoggerFactory.getLogger(StorageSignal.class);

    /** A read: the storage side can take more work. */
    static final int CLEAR = 0;
    /** A read: the storage side is saturated. */
    static final int SATURATED = 1;
    /** A read: the source threw (counted as a plugin fault). */
    static final int FAULT = 2;
    /** Not read yet in this processor round (a processor reads the signal at most once per round). */
    static final int UNREAD = -1;

    private final PipelineStats stats;
    private volatile StoragePressure pressure = StoragePressure.NONE;
    private volatile Function<BrokerLoad, StoragePressure> factory;
    /** A storage plugin's source is set: connections keep the topics of their last produce for the per-topic check. */
    private volatile boolean perTopic;
    /** Processors that kept a connection waiting on storage pressure: woken when it clears. */
    private final Set<NetworkProcessor<?, ?>> waiting = ConcurrentHashMap.newKeySet();
    /** How often the source reported pressure cleared ({@link StoragePressure#onCleared}). */
    private final AtomicLong clears = new AtomicLong();

    /** @param stats where a throwing source is counted ({@code plugin-fault-total}) */
    StorageSignal(PipelineStats stats) {
        this.stats = stats;
    }

    /**
     * A storage plugin's source ({@code kpipe.storage.pressure.class}) from now on. Thread: any.
     *
     * @param pressure the source
     */
    void set(StoragePressure pressure) {
        use(pressure);
        perTopic = pressure != StoragePressure.NONE;
    }

    /** @param factory builds the signal from the broker's queue gauges ({@link #onBrokerLoad}); thread: any */
    void factory(Function<BrokerLoad, StoragePressure> factory) {
        this.factory = factory;
    }

    /**
     * The broker's queue gauges are available: the signal is built from them if a factory is set. Thread: any.
     *
     * @param load the gauges, or {@code null} if the broker offers none
     */
    void onBrokerLoad(BrokerLoad load) {
        Function<BrokerLoad, StoragePressure> f = factory;
        if (f != null && load != null) {
            use(f.apply(load));
        }
    }

    private void use(StoragePressure source) {
        pressure = source;
        try {
            source.onCleared(this::cleared);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.warn(
                    "kpipe: the storage pressure source refused its wake-up listener; waiting connections are"
                            + " evaluated at their processors' rounds",
                    e);
        }
    }

    /** @return true if connections should keep the topics of their last produce for {@link #saturated(Object[], java.util.function.Function)} */
    boolean perTopic() {
        return perTopic;
    }

    /** @return broker-wide: {@link #CLEAR}, {@link #SATURATED}, or {@link #FAULT} (counted); network thread */
    int read() {
        try {
            return pressure.saturated() ? SATURATED : CLEAR;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            return fault(e);
        }
    }

    /** @return whether some topic is saturated: {@link #CLEAR}, {@link #SATURATED}, or {@link #FAULT}; network thread */
    int readTopics() {
        try {
            return pressure.anyTopicSaturated() ? SATURATED : CLEAR;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            return fault(e);
        }
    }

    /**
     * @param topics the topics of a connection's last produce ({@code RequestClassifier.topicsOf})
     * @param names resolves them to names ({@code RequestClassifier.topicName})
     * @return {@link #SATURATED} if one of them is, {@link #CLEAR} if none, {@link #FAULT} if the source threw
     *     (counted); network thread
     */
    int saturated(Object[] topics, java.util.function.Function<Object, String> names) {
        try {
            for (Object t : topics) {
                String name = names.apply(t);
                if (name != null && pressure.saturated(name)) {
                    return SATURATED;
                }
            }
            return CLEAR;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            return fault(e);
        }
    }

    /** A read of the source threw (not an error of the JVM): counted in plugin-fault-total, read as {@link #FAULT}. */
    private int fault(Throwable e) {
        stats.pluginFaults.increment();
        LOG.debug("kpipe: the storage pressure signal threw", e);
        return FAULT;
    }

    /**
     * A connection of this processor waits on storage pressure: wake the processor when pressure clears. Network
     * thread.
     *
     * @param processor the connection's processor
     */
    void waiting(NetworkProcessor<?, ?> processor) {
        waiting.add(processor);
    }

    /** @return how often the source reported pressure cleared so far; thread: any */
    long clears() {
        return clears.get();
    }

    /**
     * The source reports pressure cleared: every processor that kept a connection waiting runs a round now, where its
     * waiting connections are evaluated again. Thread: any.
     */
    private void cleared() {
        clears.incrementAndGet();
        for (NetworkProcessor<?, ?> p : waiting) {
            try {
                p.wakeup();
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                stats.pluginFaults.increment();
            }
        }
    }
}
