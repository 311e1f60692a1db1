// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * Read-only gauges of the broker's own queues behind the network layer: requests waiting for a request handler
 * ({@code RequestChannel}'s request queue, bounded by {@code queued.max.requests}) and produce requests waiting for
 * their acks ({@code ReplicaManager}'s produce purgatory). A listener reads them to tell whether the request handlers
 * or replication lag behind what it lets in. Thread: any; every method is cheap and never blocks.
 */
public interface BrokerLoad {

    /** @return requests queued for the handlers now ({@code RequestChannel}'s request queue) */
    int requestQueueSize();

    /** @return the request queue's capacity ({@code queued.max.requests}) */
    int requestQueueCapacity();

    /** @return produce requests waiting for acks in the produce purgatory now */
    int delayedProduceRequests();
}
