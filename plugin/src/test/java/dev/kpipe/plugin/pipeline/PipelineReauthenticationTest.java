// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.DISCONNECT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.NET;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.REAUTH_DONE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.SEND_DONE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.TIMEOUT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.SASL_REAUTH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.FakeBroker.ResponseStatus;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import dev.kpipe.spi.Reauthentication;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SASL re-authentication (KIP-368) on pipelined connections, on the {@link FakeBroker}: a {@code SASL_HANDSHAKE} on
 * an authenticated connection is handled on the network thread and its response is written by the broker's
 * authenticator straight to the socket, so kpipe must make sure that, as in stock Kafka, every earlier response is
 * written first, none is being written, and Kafka owns the connection again. Every step is also checked against the
 * fake's invariants (the handshake response never overtakes nor splits a response; kpipe never mutes a connection
 * that re-authenticates).
 */
class PipelineReauthenticationTest {

    private static Scenario one(Req... requests) {
        return Scenario.single(Scenario.client(requests));
    }

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    @Test
    void reauthenticationBehindPipelinedProducesWaitsForTheirResponsesThenKafkaTakesTheConnectionBack() {
        Run run = new Run(one(pAll(), pAll(), Req.of(SASL_REAUTH), Req.of(PRODUCE_ACKS_1)));
        run.except(COMPLETE);
        FakeBroker.Request handshake = run.request(0, 2);
        ConnectionPipeline cp = run.kpipe(0);
        assertTrue(handshake.read, "the handshake is read while both produces complete (pipelined)");
        assertTrue(handshake.reauthDeferred, "kpipe took the re-authentication over");
        assertFalse(handshake.reauthBegun, "it does not begin while responses are outstanding");
        assertTrue(cp.state().draining());
        assertSame(handshake, cp.held());
        assertTrue(run.conn(0).channel.isMuted(), "kpipe muted the connection (Kafka does not on this path)");
        assertEquals(1, run.stats().heldRequests());
        assertEquals(1, run.stats().reauthenticationDrains());
        assertFalse(handshake.queued, "a re-authentication is never queued for the handlers");

        run.step(COMPLETE, 1).except(COMPLETE);
        assertFalse(handshake.reauthBegun, "the second response is parked behind the first");
        run.step(COMPLETE, 0).except(REAUTH_DONE);
        assertTrue(handshake.reauthBegun, "both responses written: re-authentication began");
        assertNull(run.kpipe(0), "Kafka owns the connection again");
        assertTrue(run.conn(0).authenticating);
        assertEquals(
                List.of(
                        run.request(0, 0).correlationId(),
                        run.request(0, 1).correlationId(),
                        handshake.correlationId()),
                run.received(0),
                "the handshake response follows every earlier response");
        assertFalse(run.request(0, 3).read, "the client sends nothing while it re-authenticates");

        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(2, run.stats().upgrades(), "the produce after re-authentication pipelines the connection again");
        assertEquals(1, run.stats().downgrades());
        assertEquals(1, run.stats().drains());
        assertEquals(0, run.stats().heldRequests());
        run.finish();
    }

    @Test
    void aResponseBeingWrittenWhenTheHandshakeArrivesIsFinishedBeforeReauthenticationBegins() {
        Run run = new Run(one(Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH)));
        run.except(SEND_DONE);
        FakeBroker.Request handshake = run.request(0, 1);
        assertTrue(handshake.reauthDeferred);
        assertEquals(ResponseStatus.SENDING, run.conn(0).send.status, "the produce response is on its way");
        assertFalse(handshake.reauthBegun, "stock Kafka would write its SASL response into the middle of it");
        run.step(SEND_DONE, 0).settle();
        assertTrue(handshake.reauthBegun);
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void reauthenticationWithNothingOutstandingHandsTheConnectionBackWithoutADrain() {
        Run run = new Run(one(Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH), pAll()));
        run.step(WRITE, 0).except(WRITE);
        ConnectionPipeline cp = run.kpipe(0);
        assertTrue(cp != null && cp.inflight().isEmpty() && !cp.muted(), "pipelined, idle, readable");
        run.broker.advance(PipelineCoordinator.REAUTHENTICATION_QUIET_NANOS); // and quiet: nothing written lately
        run.step(WRITE, 0).except(REAUTH_DONE, WRITE);
        FakeBroker.Request handshake = run.request(0, 1);
        assertFalse(handshake.reauthDeferred, "nothing to wait for: Kafka begins it at once");
        assertTrue(handshake.reauthBegun);
        assertNull(run.kpipe(0));
        assertEquals(1, run.stats().downgrades());
        assertEquals(0, run.stats().drains());
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(2, run.stats().upgrades());
        run.finish();
    }

    @Test
    void reauthenticationOnAClassicConnectionIsKafkasAlone() {
        Run run = new Run(one(Req.of(METADATA), Req.of(SASL_REAUTH), Req.of(FETCH)));
        run.settle();
        assertTrue(run.request(0, 1).reauthBegun);
        assertFalse(run.request(0, 1).reauthDeferred);
        assertEquals(0, run.stats().upgrades());
        assertEquals(0, run.stats().reauthenticationDrains());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void aClientThatClosesWhileItsReauthenticationIsHeldLeavesNothingBehind() {
        Run run = new Run(new Scenario(
                1,
                2,
                16,
                Long.MAX_VALUE,
                false,
                List.of(new Scenario.Client(List.of(pAll(), pAll(), Req.of(SASL_REAUTH)), Integer.MAX_VALUE, true)),
                9));
        run.except(COMPLETE, DISCONNECT);
        assertTrue(run.request(0, 2).reauthDeferred);
        run.step(DISCONNECT, 0).except(COMPLETE);
        assertNull(run.kpipe(0));
        assertEquals(0, run.stats().heldRequests());
        assertEquals(0, run.stats().pipelinedConnections());
        run.settle();
        assertFalse(run.request(0, 2).reauthBegun, "nothing to re-authenticate on a closed connection");
        run.finish();
    }

    /**
     * Once the earlier responses are written, the re-authentication begins only after the connection has written
     * nothing for its quiet period, so the handshake response reaches the client apart from them (see {@link
     * PipelineCoordinator#REAUTHENTICATION_QUIET_NANOS}); meanwhile the processor keeps polling.
     */
    @Test
    void theReauthenticationBeginsOnlyAfterTheConnectionWroteNothingForItsQuietPeriod() {
        long quiet = PipelineCoordinator.REAUTHENTICATION_QUIET_NANOS;
        Run run = new Run(one(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH)));
        List<Long> wakeups = quietPeriod(run, quiet);
        run.except(COMPLETE);
        FakeBroker.Request handshake = run.request(0, 2);
        ConnectionPipeline cp = run.kpipe(0);
        assertTrue(handshake.reauthDeferred);
        run.step(COMPLETE, 0).except(REAUTH_DONE, TIMEOUT);
        assertEquals(2, run.received(0).size(), "both produce responses are written");
        assertWaitsForTheQuietPeriod(run, handshake, cp, quiet, wakeups);
        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    /**
     * With nothing outstanding, a handshake that follows a response written less than the quiet period ago is held
     * too (stock Kafka would answer it at once, and the client may read both responses at once).
     */
    @Test
    void aHandshakeRightAfterAWrittenResponseWaitsForTheQuietPeriodToo() {
        long quiet = PipelineCoordinator.REAUTHENTICATION_QUIET_NANOS;
        Run run = new Run(one(Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH), pAll()));
        List<Long> wakeups = quietPeriod(run, quiet);
        run.step(WRITE, 0).except(WRITE, TIMEOUT);
        ConnectionPipeline cp = run.kpipe(0);
        assertTrue(cp != null && cp.inflight().isEmpty() && !cp.muted(), "pipelined, idle, readable");
        run.step(WRITE, 0).except(REAUTH_DONE, WRITE, TIMEOUT);
        FakeBroker.Request handshake = run.request(0, 1);
        assertTrue(handshake.reauthDeferred, "held although nothing is outstanding");
        assertEquals(1, run.stats().reauthenticationDrains());
        assertWaitsForTheQuietPeriod(run, handshake, cp, quiet, wakeups);
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(2, run.stats().upgrades());
        run.finish();
    }

    /**
     * Lets a processor's poll time out a tenth of the quiet period after its last round, so that rounds run inside the
     * quiet period (simulated time), and returns the wake-ups kpipe asks for from now on (ns from then).
     */
    private static List<Long> quietPeriod(Run run, long quietNanos) {
        run.broker.pollNanos = quietNanos / 10;
        run.broker.wakeups.clear();
        return run.broker.wakeups;
    }

    /**
     * The handshake stays held while rounds run within the first half of the quiet period, kpipe asked for one wake-up
     * at its end, and the re-authentication begins at the first round after it.
     */
    private static void assertWaitsForTheQuietPeriod(
            Run run, FakeBroker.Request handshake, ConnectionPipeline cp, long quiet, List<Long> wakeups) {
        assertFalse(handshake.reauthBegun, "not yet: the connection wrote a response less than the quiet period ago");
        assertEquals(1, wakeups.size(), "one wake-up asked for");
        assertTrue(wakeups.get(0) > 0 && wakeups.get(0) <= quiet, "at the end of the quiet period: " + wakeups);
        int rounds = 0;
        while (run.broker.nanos() - cp.lastWrittenNanos() < quiet / 2) {
            run.step(TIMEOUT, 0).only(NET); // the processor's poll times out and it runs a round
            rounds++;
            assertFalse(handshake.reauthBegun, "round " + rounds + " keeps it waiting");
        }
        assertEquals(1, wakeups.size(), "no further wake-up asked for");
        long deadline = run.broker.nanos() + 10_000_000_000L;
        while (!handshake.reauthBegun && run.broker.nanos() < deadline) {
            run.step(TIMEOUT, 0).only(NET);
        }
        assertTrue(handshake.reauthBegun, "it began once the quiet period passed");
        assertTrue(run.broker.nanos() - cp.lastWrittenNanos() >= quiet);
    }

    /**
     * A re-authentication reported on a connection that drains for an exclusive request cannot happen (it is muted);
     * should it, kpipe neither lets Kafka begin it (its response could land inside an earlier response) nor forgets
     * it: it counts a fault and closes the connection once the earlier response is written.
     */
    @Test
    void aReauthenticationOnADrainingConnectionIsAFaultThatClosesItAfterTheEarlierResponses() {
        Run run = new Run(one(pAll(), Req.of(FETCH)));
        run.except(COMPLETE);
        ConnectionPipeline cp = run.kpipe(0);
        assertSame(run.request(0, 1), cp.held(), "the FETCH waits for the produce response");
        FakeBroker.Conn c = run.conn(0);
        run.broker.injectedFaults++;
        // the fake checks that kpipe closes only connections whose close it took over, after answering every request
        // before the one that called for the close: here the held FETCH
        c.closeDeferred = true;
        c.rejected = run.request(0, 1);
        assertTrue(
                run.broker.coordinator.onReauthentication(c.proc, c.id, new Reauthentication() {}),
                "kpipe keeps Kafka from beginning it now");
        assertEquals(1, run.stats().pluginFaults());
        assertEquals(ConnectionState.CLOSING_AFTER_DRAIN, cp.state());
        assertFalse(c.closedByBroker, "not before the produce response is written");
        run.broker.runFair(100);
        assertTrue(c.closedByBroker, "closed once the produce response was written");
        assertEquals(List.of(run.request(0, 0).correlationId()), run.received(0));
        assertNull(run.kpipe(0));
        run.finish();
    }

    @Test
    void reauthenticationsKeepComingEveryFewRequestsAndEveryResponseArrivesOnceInOrder() {
        Run run = new Run(one(
                pAll(),
                Req.of(PRODUCE_ACKS_1),
                Req.of(SASL_REAUTH),
                pAll(),
                Req.of(PRODUCE_ACKS_0),
                pAll(),
                Req.of(SASL_REAUTH),
                Req.of(PRODUCE_ACKS_1),
                Req.of(SASL_REAUTH),
                pAll(),
                pAll()));
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(3, run.stats().downgrades(), "each re-authentication handed the connection back");
        assertEquals(4, run.stats().upgrades(), "and the next produce pipelined it again");
        for (FakeBroker.Response r : run.broker.responses) {
            assertTrue(r.handedToBroker <= 1 && r.completions <= 1, "no double delivery: " + r);
        }
        run.finish();
    }
}
