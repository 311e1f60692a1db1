package dev.kpipe.spi;

/**
 * End-to-end back pressure: the storage side of the produce path (a diskless topic's write-ahead
 * queue, a tiered upload backlog, the broker's own request queue and produce purgatory) reports
 * that it cannot take more work. While it is saturated, no pipelined connection is unmuted; the
 * classic path is unaffected.
 *
 * <p>Implementations may implement {@code org.apache.kafka.common.Configurable} to receive the
 * broker's configuration.
 */
@FunctionalInterface
public interface StoragePressure {

    /** Never saturated. */
    StoragePressure NONE = () -> false;

    /**
     * Thread: network threads, often (once per pipelined connection evaluation); must be cheap and
     * must not block. A throwable is caught and counted as a plugin fault; the connection being evaluated then reads
     * its next request as a classic connection would, once every earlier response is written.
     *
     * @return true while the storage side is saturated
     */
    boolean saturated();
}
