// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.extension;

/**
 * End-to-end back pressure from the storage side of the produce path (a diskless topic's write-ahead queue, a tiered
 * upload backlog, a follower that fell behind): while it reports a topic saturated, no pipelined connection that
 * produces to that topic reads its next request; while it reports the broker saturated, no pipelined connection does.
 * Classic connections are unaffected (Kafka's own bounds apply to them). kpipe adds the broker's own queues (its request
 * queue 80% full, {@code kpipe.max.delayed.produce.requests}) as broker-wide pressure.
 *
 * <p>Configured by class name ({@code kpipe.storage.pressure.class}); a class with a public no-argument constructor,
 * optionally implementing {@code org.apache.kafka.common.Configurable} to receive the broker's configuration.
 *
 * <p>Threads and cost: {@link #saturated()} and {@link #anyTopicSaturated()} are read once per network processor round,
 * {@link #saturated(String)} for the topics of each connection kpipe evaluates while a topic is saturated: all on
 * network threads, so each must be cheap (a volatile read, a concurrent map look-up) and must not block. A throwable
 * is caught and counted ({@code plugin-fault-total}); the connection then reads its next request as a classic one
 * would, once every earlier response is written.
 *
 * <p>Wake-up: a connection kept waiting is evaluated again at a round of its processor: the next one once no topic is
 * saturated, else one at least 100 ms after its last evaluation. A source that calls the listener given to
 * {@link #onCleared} when pressure clears (on any thread) lets the waiting connections read at once rather than when
 * their processors happen to run (up to the broker's poll timeout, 300 ms, on an idle processor).
 */
public interface StoragePressure {

    /** Never saturated. */
    StoragePressure NONE = new StoragePressure() {};

    /** @return true while the storage side can take no more writes at all; default false */
    default boolean saturated() {
        return false;
    }

    /**
     * @return true while at least one topic is saturated, so that kpipe asks {@link #saturated(String)}; default false.
     *     Must not be stale in the other direction: true whenever {@code saturated(topic)} is true for some topic
     */
    default boolean anyTopicSaturated() {
        return false;
    }

    /**
     * @param topic a topic a pipelined connection produced to in its last request
     * @return true while writes to the topic cannot be taken; default false
     */
    default boolean saturated(String topic) {
        return false;
    }

    /**
     * Called by kpipe when it takes the source into use, and again, with a listener of the same effect, when the
     * broker's queue gauges become available (kpipe then combines the source with them): keep the last listener, and
     * start anything the source runs only once.
     *
     * @param listener to run (on any thread; it is cheap and never blocks) whenever saturation clears, broker-wide or
     *     of a topic; spurious calls are harmless
     */
    default void onCleared(Runnable listener) {}
}
