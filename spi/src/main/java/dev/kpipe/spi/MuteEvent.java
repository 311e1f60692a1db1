package dev.kpipe.spi;

/**
 * The events of Kafka's per-connection mute state machine, mirroring
 * {@code org.apache.kafka.common.network.KafkaChannel.ChannelMuteEvent}.
 * {@link #THROTTLE_STARTED} and {@link #THROTTLE_ENDED} are the KIP-219 quota throttle window.
 */
public enum MuteEvent {
    /** A request was read and queued; the connection is muted until its response is written. */
    REQUEST_RECEIVED,
    /** The response to the connection's request was written (or there was none: acks=0). */
    RESPONSE_SENT,
    /** A quota throttle window started for the connection (KIP-219). */
    THROTTLE_STARTED,
    /** A quota throttle window ended for the connection (KIP-219). */
    THROTTLE_ENDED
}
