// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * What the broker does with a request it has just read and parsed, as decided by
 * {@link NetworkEventListener#onRequestRead}.
 */
public enum Admission {
    /**
     * Stock handling: the broker queues the request for the handlers and keeps the connection muted until its response
     * is written. On a connection the plugin owned, the plugin gives it back with this request (nothing of the
     * connection may be outstanding).
     */
    CLASSIC,
    /**
     * The broker queues the request for the handlers, and the plugin owns the connection's mute state: the read muted
     * it as usual, and the plugin unmutes it when it chooses ({@link NetworkProcessor#unmute}), typically once the
     * request is dispatched.
     */
    PIPELINED,
    /**
     * The broker does not queue the request; the plugin owns the connection, which stays muted. The plugin queues the
     * request later with {@link NetworkProcessor#release} or {@link NetworkProcessor#handBack}, or, if the connection
     * closes first, with {@code release} as it learns of the close.
     */
    HELD
}
