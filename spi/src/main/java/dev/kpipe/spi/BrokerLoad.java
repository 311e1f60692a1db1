// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * Read-only gauges of the broker's own queues, offered by the broker for a default
 * {@link StoragePressure}. Thread: any; every method is cheap and never blocks.
 */
public interface BrokerLoad {

    /** @return requests queued for the handlers now ({@code RequestChannel}'s request queue) */
    int requestQueueSize();

    /** @return the request queue's capacity ({@code queued.max.requests}) */
    int requestQueueCapacity();

    /** @return produce requests waiting for acks in the produce purgatory now */
    int delayedProduceRequests();
}
