// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's {@link ConnectionState} and the one method that moves it ({@link #move}), in the style of Kafka's
 * {@code KafkaChannel.handleChannelMuteEvent}, with the counts that go with a move. A part of
 * {@link ConnectionPipeline}, the only class that calls it ({@code ConnectionPipeline.transition}).
 *
 * <p>Thread: the connection's network thread; {@link #state()} on any (volatile, for the connection dump).
 */
final class ConnectionStateMachine {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionStateMachine.class);
    /** Illegal moves: WARN once, then DEBUG (see {@link FaultLog}). */
    private static final FaultLog ILLEGAL_MOVE = new FaultLog(LOG);

    private final PipelineStats stats;
    private final Ticker ticker;
    /** Changed by {@link #move} only; volatile for the connection dump. */
    private volatile ConnectionState state = ConnectionState.PIPELINED;
    /** When the current drain started (the coordinator's clock). */
    private long drainStartNanos;

    /**
     * @param stats the broker-wide counts a move changes
     * @param ticker the coordinator's clock (drain times)
     */
    ConnectionStateMachine(PipelineStats stats, Ticker ticker) {
        this.stats = stats;
        this.ticker = ticker;
    }

    /** @return the state; thread: any (volatile) */
    ConnectionState state() {
        return state;
    }

    /**
     * Moves to the next state. The legal moves are {@link ConnectionState#next}'s table, and a read
     * ({@link ConnectionEvent#REQUEST_READ}, {@link ConnectionEvent#EXCLUSIVE_HELD}) only while no request is in the
     * dispatch phase. Every other move is illegal (a kpipe bug, or a read or re-authentication on a connection kpipe
     * keeps muted): counted in {@code plugin-fault-total}, logged (WARN once, then DEBUG), and a connection kpipe still
     * owns goes to {@link ConnectionState#CLOSING_AFTER_DRAIN} (closed once its earlier responses are written), a
     * terminal one stays. The counts that go with a move: entering a draining state from PIPELINED starts a drain
     * ({@code drain-total}, its start time); handing a draining connection back ends it ({@code drain-time-ms-total});
     * every hand-back is a downgrade ({@code downgrade-total}); {@code reauthentication-drain-total}; entering a state
     * with a wait reason starts a wait ({@code wait-<reason>-total}).
     *
     * @param event what happened
     * @param inDispatchPhase true if a request of the connection is in the dispatch phase
     * @param conn the connection, for the log
     * @return true if the move was legal; false if it was illegal (counted)
     */
    boolean move(ConnectionEvent event, boolean inDispatchPhase, Object conn) {
        ConnectionState from = state;
        ConnectionState to = from.next(event);
        if (inDispatchPhase && (event == ConnectionEvent.REQUEST_READ || event == ConnectionEvent.EXCLUSIVE_HELD)) {
            to = null; // a read while the previous request is in the dispatch phase: the connection was muted
        }
        boolean legal = to != null;
        if (!legal) {
            stats.pluginFaults.increment();
            ILLEGAL_MOVE.fault("kpipe: illegal move {} in state {} of {}", event, from, conn);
            to = from.owned() ? ConnectionState.CLOSING_AFTER_DRAIN : from;
        }
        state = to;
        if (to == from) {
            return legal;
        }
        if (to.draining() && from == ConnectionState.PIPELINED) {
            drainStartNanos = ticker.nanos();
            stats.drains.increment();
        }
        if (to == ConnectionState.HANDED_BACK) {
            if (from.draining()) {
                stats.drainTimeNanos.add(ticker.nanos() - drainStartNanos);
            }
            stats.downgrades.increment();
        }
        if (to == ConnectionState.DRAINING_REAUTHENTICATION) {
            stats.reauthenticationDrains.increment();
        }
        WaitReason waits = to.waitReason();
        if (waits != null) {
            stats.waitStarted(waits);
        }
        return legal;
    }
}
