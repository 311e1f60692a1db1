// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.DISCONNECT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.END_THROTTLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.HANDLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.NET;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.RETURN;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.SEND_DONE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.API_VERSIONS;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_EXCLUDED;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_TRANSACTIONAL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.FakeBroker.ResponseStatus;
import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import dev.kpipe.spi.Admission;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Example scenarios on the {@link FakeBroker}; every step is also checked against its invariants. */
class PipelineScenariosTest {

    private static Scenario one(Req... requests) {
        return Scenario.single(Scenario.client(requests));
    }

    private static Scenario withLimits(int maxInflight, long maxBytes, Req... requests) {
        return new Scenario(1, 4, maxInflight, maxBytes, false, List.of(Scenario.client(requests)), 7);
    }

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    @Test
    void firstProduceUpgradesAndResponsesCompletingInReverseOrderAreWrittenInArrivalOrder() {
        Run run = new Run(one(pAll(), pAll(), pAll()));
        run.except(COMPLETE);
        assertEquals(1, run.stats().upgrades());
        assertEquals(3, run.kpipe(0).inflight().size(), "all three read before any completes");
        assertEquals(3, run.broker.completions.size());

        run.step(COMPLETE, 2).except(COMPLETE);
        assertEquals(1, run.stats().heldResponses(), "the newest response waits for the two before it");
        run.step(COMPLETE, 1).except(COMPLETE);
        assertEquals(2, run.stats().heldResponses());
        assertTrue(run.received(0).isEmpty());

        run.step(COMPLETE, 0).settle();
        run.assertReceivedInOrder(0);
        assertEquals(0, run.stats().heldResponses());
        run.finish();
    }

    @Test
    void onlyOneRequestPerConnectionIsInTheDispatchPhaseWhateverTheNumberOfHandlers() {
        // acks=all: no response before the purgatory completes it, so only handle's return ends the dispatch phase
        Run run = new Run(
                new Scenario(1, 4, 16, Long.MAX_VALUE, false, List.of(Scenario.client(pAll(), pAll(), pAll())), 3));
        run.except(RETURN, COMPLETE);
        assertEquals(1, run.conn(0).dispatchPhase.size(), "the second is not read before the first is dispatched");
        assertTrue(run.kpipe(0).awaitingDispatch());
        assertEquals(2, run.conn(0).inbound.size(), "two requests wait in the socket");
        assertTrue(run.conn(0).channel.isMuted());

        run.step(RETURN, 0).except(RETURN, COMPLETE);
        assertEquals(1, run.conn(0).dispatchPhase.size());
        assertEquals(1, run.conn(0).inbound.size());
        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void aResponseBeforeHandleReturnsEndsTheDispatchPhaseAndTheLateSignalWakesNobody() {
        // acks=1: the response is sent inside KafkaApis.handle. Here no handler returns until all three are answered.
        Run run = new Run(new Scenario(
                1,
                4,
                16,
                Long.MAX_VALUE,
                false,
                List.of(Scenario.client(Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_1))),
                3));
        run.except(RETURN);
        run.assertReceivedInOrder(0);
        assertEquals(3, run.received(0).size(), "each response let the next request be read");
        assertFalse(run.kpipe(0).awaitingDispatch());
        assertEquals(0, run.conn(0).inbound.size());

        FakeBroker.Proc proc = run.broker.procs.get(0);
        int wakeups = proc.wakeups;
        run.step(RETURN, 0).step(RETURN, 1).step(RETURN, 2);
        assertEquals(wakeups, proc.wakeups, "the handlers' dispatch signals came after the responses: no wake-up");
        run.settle();
        run.finish();
    }

    @Test
    void acksZeroProduceGetsNoResponseAndTheResponsesAfterItKeepTheirOrder() {
        Run run = new Run(one(pAll(), Req.of(PRODUCE_ACKS_0), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_0), pAll()));
        run.except(COMPLETE);
        assertEquals(Admission.PIPELINED, run.request(0, 1).admission);
        run.step(COMPLETE, 1).except(COMPLETE).step(COMPLETE, 0).settle();
        run.assertReceivedInOrder(0);
        assertEquals(3, run.received(0).size());
        run.finish();
    }

    @Test
    void exclusiveFetchInTheMiddleOfAPipelineDrainsThenDowngradesThenTheNextProduceUpgradesAgain() {
        Run run = new Run(one(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH), Req.of(PRODUCE_ACKS_1)));
        run.except(COMPLETE);
        ConnectionPipeline cp = run.kpipe(0);
        assertTrue(cp.state().draining());
        assertSame(run.request(0, 2), cp.held());
        assertEquals(Admission.HELD, run.request(0, 2).admission);
        assertFalse(run.request(0, 2).queued, "the fetch waits until every earlier response is written");
        assertEquals(1, run.stats().heldRequests());
        assertEquals(1, run.stats().heldResponses(), "the acks=1 response waits for the acks=all one");
        assertEquals(1, run.conn(0).inbound.size(), "nothing after the fetch is read while draining");

        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(1, run.stats().drains());
        assertEquals(1, run.stats().downgrades());
        assertEquals(2, run.stats().upgrades());
        run.finish();
    }

    @Test
    void handBackLeavesKafkaTheChannelStateItExpectsAfterReadingTheHeldRequest() {
        Run run = new Run(one(Req.of(PRODUCE_ACKS_1), Req.of(FETCH).later()));
        run.except(SEND_DONE);
        assertTrue(run.kpipe(0).state().draining());
        run.except(COMPLETE);
        assertNull(run.kpipe(0), "downgraded");
        assertTrue(run.request(0, 1).handled);
        assertEquals(FakeKafkaChannel.State.MUTED_AND_RESPONSE_PENDING, run.conn(0).channel.state);
        run.settle();
        assertEquals(FakeKafkaChannel.State.NOT_MUTED, run.conn(0).channel.state);
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void metadataAndApiVersionsArePipelinedOnAPipelinedConnectionButDoNotUpgradeAClassicOne() {
        Run run = new Run(one(
                Req.of(API_VERSIONS),
                Req.of(METADATA),
                Req.of(PRODUCE_ACKS_1),
                Req.of(METADATA),
                Req.of(PRODUCE_ACKS_1)));
        run.settle();
        assertEquals(Admission.CLASSIC, run.request(0, 0).admission);
        assertEquals(Admission.CLASSIC, run.request(0, 1).admission);
        assertEquals(Admission.PIPELINED, run.request(0, 2).admission);
        assertEquals(Admission.PIPELINED, run.request(0, 3).admission);
        assertEquals(1, run.stats().upgrades());
        assertEquals(0, run.stats().drains());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void aConsumerConnectionIsNeverUpgraded() {
        Run run = new Run(one(
                Req.of(METADATA),
                Req.of(FETCH).later(),
                Req.of(FETCH),
                Req.of(FETCH).later()));
        run.settle();
        assertEquals(0, run.stats().upgrades());
        assertEquals(0, run.stats().pipelinedRequests());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void produceToAnExcludedTopicOrTransactionalProduceIsExclusive() {
        Run run = new Run(one(
                Req.of(PRODUCE_EXCLUDED), pAll(), Req.of(PRODUCE_TRANSACTIONAL).later(), Req.of(PRODUCE_ACKS_1)));
        run.except(COMPLETE);
        assertEquals(Admission.CLASSIC, run.request(0, 0).admission, "does not upgrade");
        assertEquals(Admission.PIPELINED, run.request(0, 1).admission);
        assertEquals(Admission.HELD, run.request(0, 2).admission, "waits for the acks=all produce");
        run.settle();
        assertEquals(Admission.PIPELINED, run.request(0, 3).admission, "upgraded again");
        assertEquals(1, run.stats().downgrades());
        assertEquals(1, run.stats().drains());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void exclusiveRequestWithNothingInFlightDowngradesWithoutADrain() {
        Run run = new Run(one(Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_EXCLUDED), Req.of(PRODUCE_ACKS_0)));
        run.step(WRITE, 0).except(WRITE);
        assertNotNull(run.kpipe(0));
        run.step(WRITE, 0).except(WRITE);
        assertEquals(Admission.CLASSIC, run.request(0, 1).admission);
        assertNull(run.kpipe(0));
        assertEquals(0, run.stats().drains());
        assertEquals(1, run.stats().downgrades());
        run.settle();
        assertEquals(Admission.PIPELINED, run.request(0, 2).admission);
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void produceNamingTopicsByIdIsPipelinedWhenTheIdsResolve() {
        Run run = new Run(one(
                Req.of(PRODUCE_ACKS_1).byId(),
                Req.of(PRODUCE_ACKS_0).byId(),
                Req.of(PRODUCE_EXCLUDED).byId()));
        run.step(WRITE, 0).step(WRITE, 0).except(WRITE).step(WRITE, 0).settle();
        assertEquals(Admission.PIPELINED, run.request(0, 0).admission);
        assertEquals(Admission.PIPELINED, run.request(0, 1).admission);
        assertEquals(Admission.CLASSIC, run.request(0, 2).admission);
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void throttleStartingWhileADrainIsPendingDelaysTheDowngradeUntilTheWindowEnds() {
        Run run = new Run(one(pAll().throttle(), Req.of(FETCH)));
        run.except(COMPLETE, END_THROTTLE);
        assertTrue(run.kpipe(0).state().draining());
        run.step(COMPLETE, 0).except(END_THROTTLE);
        ConnectionPipeline cp = run.kpipe(0);
        assertNotNull(cp, "still draining: the throttle window is open");
        assertTrue(cp.inflight().isEmpty(), "the produce response is written");
        assertTrue(cp.throttled());
        assertEquals(1, run.stats().throttledConnections());
        assertEquals(1, run.received(0).size());
        assertFalse(run.request(0, 1).queued);

        run.step(END_THROTTLE, 0).except();
        assertNull(run.kpipe(0), "downgraded once the window ended");
        assertEquals(0, run.stats().throttledConnections());
        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void overlappingThrottleWindowsKeepTheDrainPendingUntilTheLastEnds() {
        Run run = new Run(one(pAll().throttle(), pAll().throttle(), Req.of(FETCH), Req.of(PRODUCE_ACKS_1)));
        run.except(COMPLETE, END_THROTTLE);
        assertTrue(run.kpipe(0).state().draining());
        run.except(END_THROTTLE);
        ConnectionPipeline cp = run.kpipe(0);
        assertEquals(2, cp.throttleWindows());
        assertTrue(cp.inflight().isEmpty());
        assertEquals(1, run.stats().throttledConnections(), "one connection, two windows");
        run.step(END_THROTTLE, 0).except(END_THROTTLE);
        assertSame(cp, run.kpipe(0), "a window is still open");
        assertTrue(cp.state().draining());
        assertTrue(run.conn(0).channel.isMuted());
        run.step(END_THROTTLE, 0).settle();
        assertEquals(0, run.stats().throttledConnections());
        assertEquals(1, run.stats().downgrades());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void throttledClassicConnectionIsLeftToKafka() {
        Run run = new Run(one(Req.of(METADATA).throttle(), Req.of(FETCH).throttle(), Req.of(PRODUCE_ACKS_1)));
        run.except(END_THROTTLE);
        assertNull(run.kpipe(0));
        assertEquals(FakeKafkaChannel.State.MUTED_AND_THROTTLED, run.conn(0).channel.state);
        run.settle();
        assertEquals(Admission.PIPELINED, run.request(0, 2).admission);
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void inflightLimitOfTwoStopsReadingUntilTheOldestIsAnswered() {
        Run run = new Run(withLimits(2, Long.MAX_VALUE, pAll(), pAll(), pAll(), pAll()));
        run.except(COMPLETE);
        assertEquals(2, run.kpipe(0).inflight().size());
        assertEquals(2, run.conn(0).inbound.size());
        assertTrue(run.conn(0).channel.isMuted());
        assertEquals(2, run.stats().maxInflightPerConnection());

        run.step(COMPLETE, 1).except(COMPLETE);
        assertEquals(
                2, run.kpipe(0).inflight().size(), "the second's response does not free a slot before the first's");
        run.step(COMPLETE, 0).except(COMPLETE);
        assertEquals(2, run.kpipe(0).inflight().size(), "both answered, two more read");
        assertEquals(0, run.conn(0).inbound.size());
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(2, run.stats().maxInflightPerConnection());
        run.finish();
    }

    @Test
    void byteLimitStillReadsASingleRequestLargerThanTheLimit() {
        Run run = new Run(withLimits(16, 1, pAll(), pAll(), Req.of(PRODUCE_ACKS_1)));
        run.except(COMPLETE);
        assertEquals(1, run.kpipe(0).inflight().size());
        assertEquals(2, run.conn(0).inbound.size());
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(1, run.stats().maxInflightPerConnection());
        run.finish();
    }

    @Test
    void disconnectWithParkedResponsesAndAHeldRequestForwardsTheRequestAndDiscardsTheResponses() {
        Scenario s = Scenario.single(new Client(
                List.of(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH), Req.of(PRODUCE_ACKS_1)),
                Integer.MAX_VALUE,
                true));
        Run run = new Run(s);
        run.except(COMPLETE);
        assertEquals(1, run.stats().heldResponses());
        assertEquals(1, run.stats().heldRequests());
        FakeBroker.Response parked = run.broker.responses.stream()
                .filter(r -> r.request == run.request(0, 1))
                .findFirst()
                .orElseThrow();

        run.step(DISCONNECT, 0).except(COMPLETE);
        assertFalse(run.conn(0).open);
        assertNull(run.kpipe(0));
        assertEquals(ResponseStatus.DISCARDED, parked.status);
        assertTrue(
                run.request(0, 2).forwarded && run.request(0, 2).handled,
                "the held fetch is queued as Kafka would have");
        assertEquals(0, run.stats().heldResponses());
        assertEquals(0, run.stats().heldRequests());
        assertEquals(0, run.stats().inflightRequests());
        assertEquals(0, run.stats().pipelinedConnections());

        run.settle();
        FakeBroker.Response late = run.broker.responses.stream()
                .filter(r -> r.request == run.request(0, 0))
                .findFirst()
                .orElseThrow();
        assertEquals(ResponseStatus.DROPPED, late.status, "completed after the close: dropped by the broker");
        run.finish();
    }

    @Test
    void disconnectWithASendInFlightLetsTheBrokerCompleteIt() {
        Scenario s = Scenario.single(
                new Client(List.of(Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_1)), Integer.MAX_VALUE, true));
        Run run = new Run(s);
        run.except(SEND_DONE);
        FakeBroker.Response sending = run.conn(0).send;
        assertNotNull(sending);
        assertTrue(run.kpipe(0).inflight().sendOutstanding());
        run.step(DISCONNECT, 0).settle();
        assertEquals(1, sending.completions, "completed by processDisconnected after onConnectionClosed");
        run.finish();
    }

    @Test
    void disconnectWhileThrottledReleasesTheThrottledGauge() {
        Scenario s = Scenario.single(new Client(
                List.of(Req.of(PRODUCE_ACKS_1).throttle(), Req.of(PRODUCE_ACKS_1)), Integer.MAX_VALUE, true));
        Run run = new Run(s);
        run.except(END_THROTTLE);
        assertEquals(1, run.stats().throttledConnections());
        run.step(DISCONNECT, 0).except(END_THROTTLE);
        assertEquals(0, run.stats().throttledConnections());
        run.settle();
        run.finish();
    }

    @Test
    void acksZeroProduceErrorClosesTheConnectionAndKpipeForgetsIt() {
        Run run = new Run(
                one(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_0).closing(), Req.of(PRODUCE_ACKS_1)));
        run.settle();
        assertTrue(run.conn(0).closedByBroker);
        assertEquals(2, run.received(0).size(), "the responses before the acks=0 request are written first");
        assertEquals(run.expected(0).subList(0, 2), run.received(0));
        assertNull(run.kpipe(0));
        run.finish();
    }

    @Test
    void connectionsOnTwoProcessorsAreIndependent() {
        Scenario s = new Scenario(
                2,
                3,
                3,
                Long.MAX_VALUE,
                true,
                List.of(
                        Scenario.client(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH), pAll()),
                        Scenario.client(Req.of(PRODUCE_ACKS_0), pAll().throttle(), Req.of(METADATA)),
                        Scenario.client(Req.of(FETCH).later(), Req.of(PRODUCE_ACKS_1))),
                11);
        Run run = new Run(s);
        run.settle();
        for (int c = 0; c < 3; c++) {
            run.assertReceivedInOrder(c);
        }
        run.finish();
    }

    /**
     * A handler thread descheduled inside {@code onRequestDispatched}, between clearing
     * {@code awaitingDispatch} and queueing its connection for the network thread, may queue it
     * after the network thread has already downgraded the connection (the cleared field let it
     * unmute, read an exclusive request, drain and hand back). The stale entry must be ignored; it
     * used to hand the connection back a second time (heldRequests gauge -1, a REQUEST_RECEIVED on
     * a channel Kafka already owns: IllegalStateException, counted as a plugin fault).
     */
    @Test
    void lateDispatchNotificationForADowngradedConnectionIsIgnored() {
        Run run = new Run(one(pAll(), Req.of(FETCH)));
        run.except(COMPLETE);
        ConnectionPipeline stale = run.kpipe(0);
        assertTrue(stale.state().draining());
        run.settle();
        assertNull(run.kpipe(0));
        assertEquals(1, run.stats().downgrades());

        FakeBroker.Proc p = run.broker.procs.get(0);
        p.pipelines().signalled(stale, false);
        p.wakeup();
        run.settle();
        assertEquals(1, run.stats().downgrades());
        assertEquals(0, run.stats().heldRequests());
        run.finish();
    }

    @Test
    void clientThatWaitsForEachResponseBehavesAsWithStockKafka() {
        Run run = new Run(Scenario.single(
                new Client(List.of(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(METADATA), pAll()), 1, false)));
        run.only(WRITE, NET, HANDLE, RETURN);
        assertEquals(1, run.conn(0).written);
        run.settle();
        run.assertReceivedInOrder(0);
        // The next request can be read in the poll that completes the previous send, before
        // processCompletedSends frees its slot: two in flight at most, as Kafka's own ordering allows.
        assertTrue(run.stats().maxInflightPerConnection() <= 2);
        run.finish();
    }
}
