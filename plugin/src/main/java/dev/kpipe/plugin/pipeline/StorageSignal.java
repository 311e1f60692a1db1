package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.BrokerLoad;
import dev.kpipe.spi.StoragePressure;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage-side saturation signal ({@link StoragePressure}): while it reports saturation no pipelined connection is
 * unmuted. Kafka's own analogue is the request queue bound ({@code queued.max.requests}) that blocks
 * {@code RequestChannel.sendRequest}; kpipe reads the broker's queue gauges once they are available
 * ({@link #onBrokerLoad}), or a {@code kpipe.storage.pressure.class} set with {@link #set}.
 *
 * <p>Invariants: {@link #read()} never throws (a throwable of the signal is counted in {@code plugin-fault-total} and
 * read as {@link #FAULT}); until a signal is set it reads {@link #CLEAR} ({@link StoragePressure#NONE}).
 *
 * <p>Thread: {@link #set}, {@link #factory} and {@link #onBrokerLoad} on any thread (volatile); {@link #read()} on a
 * network thread.
 */
final class StorageSignal {

    private static final Logger LOG = LoggerFactory.getLogger(StorageSignal.class);

    /** {@link #read()}: the storage side can take more work. */
    static final int CLEAR = 0;
    /** {@link #read()}: the storage side is saturated. */
    static final int SATURATED = 1;
    /** {@link #read()}: the signal threw (counted as a plugin fault). */
    static final int FAULT = 2;
    /** Not read yet in this processor round ({@link ProcessorPipelines#roundSignal}). */
    static final int UNREAD = -1;

    private final PipelineStats stats;
    private volatile StoragePressure pressure = StoragePressure.NONE;
    private volatile Function<BrokerLoad, StoragePressure> factory;

    /** @param stats where a throwing signal is counted ({@code plugin-fault-total}) */
    StorageSignal(PipelineStats stats) {
        this.stats = stats;
    }

    /** @param pressure the signal from now on; thread: any */
    void set(StoragePressure pressure) {
        this.pressure = pressure;
    }

    /** @param factory builds the signal from the broker's queue gauges ({@link #onBrokerLoad}); thread: any */
    void factory(Function<BrokerLoad, StoragePressure> factory) {
        this.factory = factory;
    }

    /**
     * The broker's queue gauges are available: the signal is built from them if a factory is set. Thread: any.
     *
     * @param load the gauges
     */
    void onBrokerLoad(BrokerLoad load) {
        Function<BrokerLoad, StoragePressure> f = factory;
        if (f != null) {
            pressure = f.apply(load);
        }
    }

    /** @return {@link #CLEAR}, {@link #SATURATED}, or {@link #FAULT} if the signal threw (counted); network thread */
    int read() {
        try {
            return pressure.saturated() ? SATURATED : CLEAR;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.debug("kpipe: the storage pressure signal threw", e);
            return FAULT;
        }
    }
}
