package dev.kpipe.spi;

/**
 * What the broker does with a request it has just read and parsed, as decided by
 * {@link NetworkEventListener#onRequestReceived}.
 */
public enum Admission {
    /**
     * Stock handling: the broker queues the request for the handlers and feeds its own
     * {@code KafkaChannel} mute state machine ({@code REQUEST_RECEIVED}, later {@code RESPONSE_SENT}).
     */
    CLASSIC,
    /**
     * The broker queues the request for the handlers, but the plugin owns the connection's mute
     * state: the broker mutes the connection as usual and then does not feed the request's mute
     * events to its own state machine; the plugin unmutes the connection when it chooses
     * ({@link NetworkProcessor#unmute}).
     */
    PIPELINED,
    /**
     * The broker neither queues the request nor feeds its mute state machine; the connection stays
     * muted. The plugin later hands the request over with {@link NetworkProcessor#forward}
     * (or the broker forwards it when the connection closes).
     */
    HELD
}
