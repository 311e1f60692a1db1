// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.CONFIG;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.END_THROTTLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.NET;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import dev.kpipe.spi.Admission;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Settings changed while the broker runs (Kafka's dynamic broker config calling {@code KpipePlugin.reconfigure}):
 * {@code kpipe.enable} flipped off and on again ({@link PipelineCoordinator#enabled(boolean)}, the fake's CONFIG step,
 * run as by Kafka's config thread) and the per-connection limits replaced. Examples, then every interleaving of small
 * scenarios with a flip at any point; the {@link FakeBroker} checks its invariants on every step (Kafka's channel
 * state, response order, one send per connection, no read of a connection kpipe keeps muted, gauges) and, on every
 * quiescent state while disabled, that kpipe owns no connection any more.
 */
class PipelineReconfigurationTest {

    private static Scenario one(int flips, Req... requests) {
        return Scenario.single(Scenario.client(requests)).withEnableFlips(flips);
    }

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    @Test
    void disablingDrainsAPipelinedConnectionWithRequestsInFlightInOrderThenKafkaOwnsItAgain() {
        Run run = new Run(one(1, pAll(), pAll(), pAll(), Req.of(PRODUCE_ACKS_1)));
        run.step(WRITE, 0).step(WRITE, 0).step(WRITE, 0).except(WRITE, COMPLETE, CONFIG);
        ConnectionPipeline cp = run.kpipe(0);
        assertEquals(3, cp.inflight().size(), "three acks=all produces in flight");
        assertFalse(run.conn(0).channel.isMuted(), "the connection reads on");

        run.step(CONFIG, 0).step(WRITE, 0).except(COMPLETE);
        assertSame(cp, run.kpipe(0));
        assertTrue(cp.state().draining());
        assertNull(cp.held(), "nothing held: the drain is kpipe's own");
        assertTrue(run.conn(0).channel.isMuted(), "nothing more is read while draining");
        assertEquals(1, run.conn(0).inbound.size(), "the next request waits in the socket");
        assertEquals(1, run.stats().drains());

        // the acks arrive newest first: the responses still leave in arrival order
        run.step(COMPLETE, 2).step(COMPLETE, 1).except(COMPLETE);
        assertTrue(run.received(0).isEmpty(), "the oldest response is not ready yet");
        assertEquals(2, run.stats().heldResponses());
        run.step(COMPLETE, 0).settle();

        run.assertReceivedInOrder(0);
        assertNull(run.kpipe(0), "handed back to Kafka");
        assertEquals(Admission.CLASSIC, run.request(0, 3).admission, "read after the drain: classic");
        assertEquals(FakeKafkaChannel.State.NOT_MUTED, run.conn(0).channel.state);
        assertEquals(1, run.stats().upgrades());
        assertEquals(1, run.stats().downgrades());
        assertEquals(0, run.stats().pipelinedConnections());
        assertEquals(0, run.stats().inflightRequests());
        run.finish();
    }

    @Test
    void anIdlePipelinedConnectionIsHandedBackAtOnceAndUpgradesAgainWhenReEnabled() {
        Run run = new Run(one(2, Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_1)));
        run.step(WRITE, 0).except(WRITE, CONFIG);
        assertNotNull(run.kpipe(0), "pipelined, idle: everything answered");
        assertFalse(run.conn(0).channel.isMuted());

        run.step(CONFIG, 0).except(WRITE, CONFIG);
        assertNull(run.kpipe(0), "nothing to drain: handed back at the processor's next round");
        assertEquals(FakeKafkaChannel.State.NOT_MUTED, run.conn(0).channel.state);
        assertEquals(1, run.stats().downgrades());

        run.step(WRITE, 0).except(WRITE, CONFIG);
        assertEquals(Admission.CLASSIC, run.request(0, 1).admission, "no upgrade while disabled");
        assertNull(run.kpipe(0));

        run.step(CONFIG, 1).step(WRITE, 0).settle();
        assertEquals(Admission.PIPELINED, run.request(0, 2).admission, "enabled again: upgraded");
        assertEquals(2, run.stats().upgrades());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void whileDisabledNoConnectionIsUpgraded() {
        Run run = new Run(one(1, Req.of(PRODUCE_ACKS_1), pAll(), Req.of(PRODUCE_ACKS_0), Req.of(METADATA)));
        run.step(CONFIG, 0).settle();
        for (int i = 0; i < 4; i++) {
            assertEquals(Admission.CLASSIC, run.request(0, i).admission);
        }
        assertEquals(0, run.stats().upgrades());
        assertEquals(0, run.stats().pipelinedRequests());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    /**
     * The processor polls between kpipe's round and the drain: a request already read on the pipelined connection
     * after {@code kpipe.enable=false} is handled like an exclusive one (held until the earlier response is written,
     * then forwarded as Kafka would have).
     */
    @Test
    void aRequestReadAfterTheDisableButBeforeTheDrainStartsIsHeldThenForwardedInOrder() {
        Scenario s = new Scenario(
                        1, 2, 16, Long.MAX_VALUE, true, List.of(Scenario.client(pAll(), Req.of(PRODUCE_ACKS_1))), 3)
                .withEnableFlips(1);
        Run run = new Run(s);
        run.step(WRITE, 0).except(WRITE, COMPLETE, CONFIG);
        assertFalse(run.conn(0).channel.isMuted(), "the acks=all produce is dispatched; the connection reads on");
        run.step(WRITE, 0);
        FakeBroker.Proc p = run.broker.procs.get(0);
        while (p.phase != FakeBroker.Phase.POLL) {
            run.step(NET, 0);
        }
        run.step(CONFIG, 0).step(NET, 0).step(NET, 0);
        assertEquals(Admission.HELD, run.request(0, 1).admission);
        ConnectionPipeline cp = run.kpipe(0);
        assertTrue(cp.state().draining());
        assertSame(run.request(0, 1), cp.held());
        assertFalse(run.request(0, 1).queued, "waits for the acks=all response");

        run.settle();
        run.assertReceivedInOrder(0);
        assertNull(run.kpipe(0));
        assertTrue(run.request(0, 1).forwarded);
        assertEquals(1, run.stats().downgrades());
        run.finish();
    }

    @Test
    void aThrottleWindowOpenWhenDisabledDelaysTheHandBackUntilItEnds() {
        Run run = new Run(one(1, pAll().throttle(), Req.of(PRODUCE_ACKS_1)));
        run.step(WRITE, 0).except(WRITE, END_THROTTLE, CONFIG);
        assertEquals(1, run.received(0).size());
        assertEquals(1, run.stats().throttledConnections());

        run.step(CONFIG, 0).except(END_THROTTLE, WRITE);
        ConnectionPipeline cp = run.kpipe(0);
        assertNotNull(cp, "still kpipe's: Kafka's channel must not see the end of a window it did not see start");
        assertTrue(cp.state().draining());
        assertTrue(run.conn(0).channel.isMuted());

        run.step(END_THROTTLE, 0).except(WRITE);
        assertNull(run.kpipe(0));
        assertEquals(0, run.stats().throttledConnections());
        run.settle();
        assertEquals(Admission.CLASSIC, run.request(0, 1).admission);
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void aLowerInflightLimitAppliesFromTheNextReadAndAHigherOneFromTheNextResponse() {
        Run run = new Run(new Scenario(
                1,
                4,
                16,
                Long.MAX_VALUE,
                false,
                List.of(Scenario.client(pAll(), pAll(), pAll(), pAll(), pAll(), pAll(), pAll())),
                7));
        run.step(WRITE, 0).step(WRITE, 0).except(WRITE, COMPLETE);
        assertEquals(2, run.kpipe(0).inflight().size());

        run.broker.coordinator.limits(new InflightLimits(3, Long.MAX_VALUE));
        run.except(COMPLETE);
        assertEquals(3, run.kpipe(0).inflight().size(), "one more read, then the new limit holds");
        assertEquals(4, run.conn(0).inbound.size());
        assertTrue(run.conn(0).channel.isMuted());

        run.broker.coordinator.limits(new InflightLimits(16, Long.MAX_VALUE));
        run.except(COMPLETE);
        assertEquals(
                3,
                run.kpipe(0).inflight().size(),
                "a connection at its limit is re-evaluated when a response is written");
        run.step(COMPLETE, 0).except(COMPLETE);
        assertEquals(6, run.kpipe(0).inflight().size(), "the higher limit: the four waiting requests are read");
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(6, run.stats().maxInflightPerConnection());
        run.finish();
    }

    // ------------------------------------------------------------------ every interleaving

    private static final long MAX_STATES = 400_000;

    private static Scenario coarse(int flips, Client... clients) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, false, List.of(clients), 5).withEnableFlips(flips);
    }

    private static Scenario fine(int flips, Client... clients) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, true, List.of(clients), 5).withEnableFlips(flips);
    }

    private static Client c(Req... requests) {
        return Scenario.client(requests);
    }

    private static Req p1(int size) {
        return Req.of(PRODUCE_ACKS_1).sized(size);
    }

    static Stream<Arguments> scenarios() {
        List<Arguments> list = new ArrayList<>();
        list.add(Arguments.of(
                "disable at any point (run-loop micro-steps): acks=all then acks=1",
                fine(1, c(pAll(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "disable, enable, disable at any points: acks=all, acks=0, acks=1",
                coarse(3, c(pAll(), Req.of(PRODUCE_ACKS_0), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "disable at any point with an exclusive fetch draining",
                coarse(2, c(pAll(), Req.of(FETCH), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "disable and enable at any points: a throttle window",
                coarse(2, c(pAll().throttle(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "disable at any point, the client may disconnect at any point",
                coarse(
                        1,
                        new Client(
                                List.of(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_0)),
                                Integer.MAX_VALUE,
                                true))));
        list.add(Arguments.of(
                "disable at any point: two connections on two processors",
                new Scenario(2, 2, 16, Long.MAX_VALUE, false, List.of(c(pAll()), c(Req.of(PRODUCE_ACKS_1))), 5)
                        .withEnableFlips(1)));
        list.add(Arguments.of(
                "disable at any point while a connection waits for the byte budget",
                coarse(1, c(p1(5), p1(5)), c(p1(5))).with(Scenario.BackPressure.budget(6))));
        return list.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyInterleavingWithKpipeEnableFlippedAtAnyPoint(String name, Scenario scenario, TestReporter reporter) {
        Explorer.Result result = Explorer.explore(scenario, MAX_STATES);
        reporter.publishEntry(name, result.toString());
        assertTrue(result.quiescent() > 0);
    }
}
