// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

/**
 * The kinds of entries on a network processor's response queue, mirroring the subtypes of Kafka's
 * {@code Response} ({@code SendResponse}, {@code NoOpResponse}, {@code CloseConnectionResponse},
 * {@code StartThrottlingResponse}, {@code EndThrottlingResponse}).
 */
public enum ResponseKind {
    /** A response to write to the client. */
    SEND,
    /** No response is sent (produce with acks=0); the request is complete. */
    NO_OP,
    /** The broker closes the connection instead of answering. */
    CLOSE_CONNECTION,
    /** Control event: a quota throttle window starts (not a response; not ordered). */
    START_THROTTLING,
    /** Control event: a quota throttle window ends (not a response; not ordered). */
    END_THROTTLING;

    /** @return true for the throttle control events, which are not responses to a request */
    public boolean isControl() {
        return this == START_THROTTLING || this == END_THROTTLING;
    }
}
