// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.Reservations;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** The table of legal moves ({@link ConnectionPipeline#transition}) and the safe outcome of an illegal one. */
class ConnectionStateTest {

    /** Reservations of an unbounded budget: every read fits. */
    private static final Reservations RESERVATIONS =
            new Reservations(ByteBudget.unbounded(() -> 0L), () -> 0L, new LongAdder(), new LongAdder());

    /** Every legal move, written out once more: (from, event) to the next state. */
    private static Map<ConnectionState, Map<ConnectionEvent, ConnectionState>> table() {
        Map<ConnectionState, Map<ConnectionEvent, ConnectionState>> t = new EnumMap<>(ConnectionState.class);
        for (ConnectionState s : ConnectionState.values()) {
            t.put(s, new EnumMap<>(ConnectionEvent.class));
        }
        t.get(ConnectionState.PIPELINED).put(ConnectionEvent.REQUEST_READ, ConnectionState.PIPELINED);
        t.get(ConnectionState.PIPELINED).put(ConnectionEvent.EXCLUSIVE_HELD, ConnectionState.DRAINING_EXCLUSIVE);
        t.get(ConnectionState.PIPELINED)
                .put(ConnectionEvent.REAUTHENTICATION_HELD, ConnectionState.DRAINING_REAUTHENTICATION);
        t.get(ConnectionState.DRAINING_DISABLED)
                .put(ConnectionEvent.REAUTHENTICATION_HELD, ConnectionState.DRAINING_REAUTHENTICATION);
        t.get(ConnectionState.PIPELINED).put(ConnectionEvent.DISABLED, ConnectionState.DRAINING_DISABLED);
        for (ConnectionState s : ConnectionState.values()) {
            if (s.owned()) {
                t.get(s).put(ConnectionEvent.REQUEST_REJECTED, ConnectionState.CLOSING_AFTER_DRAIN);
                t.get(s).put(ConnectionEvent.INPUT_ENDED, ConnectionState.CLOSING_AFTER_DRAIN);
                t.get(s).put(ConnectionEvent.CLOSE, ConnectionState.CLOSED);
            }
            if (s == ConnectionState.PIPELINED || s.draining()) {
                t.get(s).put(ConnectionEvent.HAND_BACK, ConnectionState.HANDED_BACK);
            }
        }
        return t;
    }

    @Test
    void nextIsTheTableOfLegalMoves() {
        Map<ConnectionState, Map<ConnectionEvent, ConnectionState>> t = table();
        for (ConnectionState s : ConnectionState.values()) {
            for (ConnectionEvent e : ConnectionEvent.values()) {
                assertEquals(t.get(s).get(e), s.next(e), s + " on " + e);
            }
        }
    }

    @Test
    void aReadWhileTheLastRequestIsInTheDispatchPhaseIsAnIllegalMove() {
        PipelineStats stats = new PipelineStats();
        ConnectionPipeline c = new ConnectionPipeline("c", new ProcessorPipelines(null), stats, () -> 0L, 0);
        assertTrue(c.transition(ConnectionEvent.REQUEST_READ));
        Object first = new Object();
        c.requestRead(first, null, 10, dev.kpipe.plugin.classify.PipelinedApi.PRODUCE, RESERVATIONS, true);
        assertFalse(c.transition(ConnectionEvent.REQUEST_READ), "kpipe keeps it muted until the dispatch");
        assertEquals(ConnectionState.CLOSING_AFTER_DRAIN, c.state());
        assertEquals(1, stats.pluginFaults());

        ConnectionPipeline d = new ConnectionPipeline("d", new ProcessorPipelines(null), stats, () -> 0L, 0);
        d.requestRead(new Object(), null, 10, dev.kpipe.plugin.classify.PipelinedApi.PRODUCE, RESERVATIONS, true);
        assertFalse(d.transition(ConnectionEvent.EXCLUSIVE_HELD), "an exclusive request read then is illegal too");
        assertEquals(ConnectionState.CLOSING_AFTER_DRAIN, d.state());
        assertTrue(c.awaitingDispatch(), "the first request is still in its dispatch phase");
    }

    @Test
    void anIllegalMoveIsAFaultThatClosesAfterTheDrain() {
        PipelineStats stats = new PipelineStats();
        ConnectionPipeline c = new ConnectionPipeline("c", new ProcessorPipelines(null), stats, () -> 0L, 0);
        assertTrue(c.transition(ConnectionEvent.EXCLUSIVE_HELD));
        c.hold(new Object(), RESERVATIONS);
        assertFalse(c.transition(ConnectionEvent.DISABLED));
        assertEquals(1, stats.pluginFaults());
        assertEquals(ConnectionState.CLOSING_AFTER_DRAIN, c.state());
        assertTrue(c.held() != null, "the held request is kept: it is queued when the connection closes");
        assertTrue(c.transition(ConnectionEvent.CLOSE));
        assertFalse(c.transition(ConnectionEvent.CLOSE), "terminal: stays closed");
        assertEquals(ConnectionState.CLOSED, c.state());
        assertEquals(2, stats.pluginFaults());
    }

    @Test
    void closingAfterTheDrainDropsAHeldReauthentication() {
        PipelineStats stats = new PipelineStats();
        ConnectionPipeline c = new ConnectionPipeline("c", new ProcessorPipelines(null), stats, () -> 0L, 0);
        assertTrue(c.transition(ConnectionEvent.REAUTHENTICATION_HELD));
        c.holdReauthentication(new dev.kpipe.spi.Reauthentication() {}, RESERVATIONS);
        assertTrue(c.transition(ConnectionEvent.REQUEST_REJECTED));
        assertNull(c.held(), "it could only begin after the close");
        assertEquals(0, stats.heldRequests());
        assertEquals(0, stats.pluginFaults());
    }
}
