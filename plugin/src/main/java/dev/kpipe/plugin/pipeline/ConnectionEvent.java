// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * What moves a connection kpipe owns from one {@link ConnectionState} to another, in the style of Kafka's
 * {@code KafkaChannel.ChannelMuteEvent}. Fired on the connection's network thread only; the table of legal moves is on
 * {@link ConnectionPipeline#transition}.
 */
enum ConnectionEvent {
    /**
     * A pipelined request was read on a pipelined connection ({@code onRequestReceived}); legal only while no earlier
     * request is in the dispatch phase (kpipe keeps the connection muted until then).
     */
    REQUEST_READ,
    /** An exclusive request was read on a pipelined connection and is held ({@code onRequestReceived}). */
    EXCLUSIVE_HELD,
    /** A SASL re-authentication (KIP-368) was reported and is held ({@code onReauthentication}). */
    REAUTHENTICATION_HELD,
    /** The connection is evaluated while {@code kpipe.enable} is false ({@code evaluate}). */
    DISABLED,
    /** The broker refused a request kpipe read ahead ({@code onRequestRejected}). */
    REQUEST_REJECTED,
    /**
     * The broker can read nothing more from the connection while requests kpipe read ahead are unanswered: an end of
     * stream (half-close), a frame the network layer refuses, a failed read ({@code onInputEnded}).
     */
    INPUT_ENDED,
    /** Kafka takes the connection back: its drain completed, or nothing was outstanding (downgrade). */
    HAND_BACK,
    /** The broker closed the connection ({@code onConnectionClosed}). */
    CLOSE
}
