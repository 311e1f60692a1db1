// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * Every state a connection kpipe owns can be in, in the style of Kafka's {@code KafkaChannel.ChannelMuteState}. A
 * connection Kafka owns (classic) has no {@link ConnectionPipeline} and so no state here. The legal moves are the table
 * on {@link #next}, applied by {@link ConnectionPipeline#transition}; sub-conditions that hold independently of the
 * state (a request in the dispatch phase, a throttle window, a wait for the byte budget, storage-side saturation) are
 * fields beside it, not states.
 */
enum ConnectionState {
    /** Requests are read as soon as the previous one is dispatched; responses are written in arrival order. */
    PIPELINED,
    /**
     * An exclusive request (a FETCH, an admin request, ...) is held ({@link ConnectionPipeline#held}); muted until
     * every earlier response is written and no throttle window is open, then handed back to Kafka as if it had just
     * read the held request.
     */
    DRAINING_EXCLUSIVE,
    /**
     * A SASL re-authentication (KIP-368) is held ({@link ConnectionPipeline#held}, the broker's opaque handle); muted
     * until every earlier response is written and the connection has written nothing for the quiet period, then
     * handed back to Kafka unmuted and the re-authentication begins.
     */
    DRAINING_REAUTHENTICATION,
    /**
     * {@code kpipe.enable} was set to false: nothing held; muted until every earlier response is written, then handed
     * back to Kafka idle and readable.
     */
    DRAINING_DISABLED,
    /**
     * The broker refused a request kpipe read ahead, the client's input ended (end of stream, a refused frame, a
     * failed read) with requests unanswered, or an illegal move was made (a plugin fault): muted, and closed once
     * every earlier response is written. An exclusive request held when the close was decided stays in
     * {@link ConnectionPipeline#held} and is queued to the broker when the connection closes, as stock Kafka would
     * have queued it when it read it.
     */
    CLOSING_AFTER_DRAIN,
    /** Terminal: Kafka owns the connection again (downgrade); kpipe keeps nothing for it. */
    HANDED_BACK,
    /** Terminal: the connection is closed. */
    CLOSED;

    /** @return true for the three draining states */
    boolean draining() {
        return this == DRAINING_EXCLUSIVE || this == DRAINING_REAUTHENTICATION || this == DRAINING_DISABLED;
    }

    /** @return true while kpipe owns the connection (not {@link #HANDED_BACK} or {@link #CLOSED}) */
    boolean owned() {
        return this != HANDED_BACK && this != CLOSED;
    }

    /**
     * @return the state as the connection dump shows it: {@code PIPELINED} or {@code DRAINING} (a connection closing
     *     after a refused request shows {@code PIPELINED}, with the {@code close-after-drain} reason), as before the
     *     states were split
     */
    String dumpName() {
        return draining() ? "DRAINING" : "PIPELINED";
    }

    /**
     * @return the wait reason the connection shows while in this state (the connection dump, and the count of waits
     *     started, {@code wait-<label>-total}), or {@code null} for PIPELINED and the terminal states
     */
    WaitReason waitReason() {
        switch (this) {
            case DRAINING_EXCLUSIVE:
                return WaitReason.DRAIN_EXCLUSIVE;
            case DRAINING_REAUTHENTICATION:
                return WaitReason.DRAIN_REAUTHENTICATION;
            case DRAINING_DISABLED:
                return WaitReason.DRAIN_DISABLED;
            case CLOSING_AFTER_DRAIN:
                return WaitReason.CLOSE_AFTER_DRAIN;
            default:
                return null;
        }
    }

    /**
     * The table of legal moves ({@link ConnectionStateMachine#move} applies it; a read is legal only while no request
     * is in the dispatch phase):
     *
     * <table>
     *   <caption>Legal moves</caption>
     *   <tr><th>from</th><th>event</th><th>to</th></tr>
     *   <tr><td>PIPELINED</td><td>REQUEST_READ</td><td>PIPELINED</td></tr>
     *   <tr><td>PIPELINED</td><td>EXCLUSIVE_HELD</td><td>DRAINING_EXCLUSIVE</td></tr>
     *   <tr><td>PIPELINED, DRAINING_DISABLED</td><td>REAUTHENTICATION_HELD</td><td>DRAINING_REAUTHENTICATION</td></tr>
     *   <tr><td>PIPELINED</td><td>DISABLED</td><td>DRAINING_DISABLED</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*, CLOSING_AFTER_DRAIN</td><td>REQUEST_REJECTED, INPUT_ENDED</td>
     *       <td>CLOSING_AFTER_DRAIN</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*</td><td>HAND_BACK</td><td>HANDED_BACK</td></tr>
     *   <tr><td>PIPELINED, DRAINING_*, CLOSING_AFTER_DRAIN</td><td>CLOSE</td><td>CLOSED</td></tr>
     * </table>
     *
     * @param event what happened
     * @return the next state, or {@code null} if the move is illegal
     */
    ConnectionState next(ConnectionEvent event) {
        switch (event) {
            case REQUEST_READ:
                return this == PIPELINED ? PIPELINED : null;
            case EXCLUSIVE_HELD:
                return this == PIPELINED ? DRAINING_EXCLUSIVE : null;
            case REAUTHENTICATION_HELD:
                return this == PIPELINED || this == DRAINING_DISABLED ? DRAINING_REAUTHENTICATION : null;
            case DISABLED:
                return this == PIPELINED ? DRAINING_DISABLED : null;
            case REQUEST_REJECTED:
            case INPUT_ENDED:
                return owned() ? CLOSING_AFTER_DRAIN : null;
            case HAND_BACK:
                return this == PIPELINED || draining() ? HANDED_BACK : null;
            case CLOSE:
                return owned() ? CLOSED : null;
            default:
                return null;
        }
    }
}
