// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * The mute state machine of {@code org.apache.kafka.common.network.KafkaChannel} (kafka-clients
 * 4.4.0, checked against its bytecode): {@code mute()}, {@code maybeUnmute()} and
 * {@code handleChannelMuteEvent}, which throws {@link IllegalStateException} on an illegal transition.
 */
final class FakeKafkaChannel {

    enum State {
        NOT_MUTED,
        MUTED,
        MUTED_AND_RESPONSE_PENDING,
        MUTED_AND_THROTTLED,
        MUTED_AND_THROTTLED_AND_RESPONSE_PENDING
    }

    /** {@code KafkaChannel.ChannelMuteEvent}. */
    enum MuteEvent {
        REQUEST_RECEIVED,
        RESPONSE_SENT,
        THROTTLE_STARTED,
        THROTTLE_ENDED
    }

    State state = State.NOT_MUTED;

    /** {@code KafkaChannel.mute()}: NOT_MUTED becomes MUTED; every other state is kept. */
    void mute() {
        if (state == State.NOT_MUTED) {
            state = State.MUTED;
        }
    }

    /**
     * {@code KafkaChannel.maybeUnmute()}: only MUTED becomes NOT_MUTED.
     *
     * @return true if the channel is unmuted now
     */
    boolean maybeUnmute() {
        if (state == State.MUTED) {
            state = State.NOT_MUTED;
        }
        return state == State.NOT_MUTED;
    }

    boolean isMuted() {
        return state != State.NOT_MUTED;
    }

    /** {@code KafkaChannel.handleChannelMuteEvent}. */
    void handleChannelMuteEvent(MuteEvent event) {
        boolean stateChanged = false;
        switch (event) {
            case REQUEST_RECEIVED:
                if (state == State.MUTED) {
                    state = State.MUTED_AND_RESPONSE_PENDING;
                    stateChanged = true;
                }
                break;
            case RESPONSE_SENT:
                if (state == State.MUTED_AND_RESPONSE_PENDING) {
                    state = State.MUTED;
                    stateChanged = true;
                }
                if (state == State.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING) {
                    state = State.MUTED_AND_THROTTLED;
                    stateChanged = true;
                }
                break;
            case THROTTLE_STARTED:
                if (state == State.MUTED_AND_RESPONSE_PENDING) {
                    state = State.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING;
                    stateChanged = true;
                }
                break;
            case THROTTLE_ENDED:
                if (state == State.MUTED_AND_THROTTLED) {
                    state = State.MUTED;
                    stateChanged = true;
                }
                if (state == State.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING) {
                    state = State.MUTED_AND_RESPONSE_PENDING;
                    stateChanged = true;
                }
                break;
            default:
                break;
        }
        if (!stateChanged) {
            throw new IllegalStateException("Cannot transition from " + state.name() + " for " + event.name());
        }
    }
}
