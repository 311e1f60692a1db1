// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.CONFIG;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.END_THROTTLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.HANDLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.NET;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.PRESSURE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.RETURN;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.TIMEOUT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.BAD;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.SASL_REAUTH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.plugin.pipeline.Scenario.BackPressure;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import dev.kpipe.plugin.testkit.KafkaRequests;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

/** {@link PipelineCoordinator#connectionSnapshots()} on the {@link FakeBroker}: what the connection dump reads. */
class ConnectionSnapshotTest {

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    private static ConnectionSnapshot only(Run run) {
        List<ConnectionSnapshot> all = run.broker.coordinator.connectionSnapshots();
        assertEquals(1, all.size(), () -> "one connection: " + all);
        return all.get(0);
    }

    @Test
    void pipelinedConnectionShowsItsRequestsHeldResponsesClientAndAge() {
        Run run = new Run(Scenario.single(Scenario.client(pAll(), pAll(), pAll())));
        run.except(COMPLETE);
        run.step(COMPLETE, 2).except(COMPLETE);
        ConnectionSnapshot s = only(run);
        ConnectionPipeline cp = run.kpipe(0);
        assertEquals(cp.id(), s.connectionId());
        assertEquals("PIPELINED", s.state());
        assertEquals(3, s.inflightRequests(), "three read, none answered");
        assertEquals(cp.inflight().bytes(), s.inflightBytes());
        assertEquals(1, s.heldResponses(), "the newest response waits for the two before it");
        assertEquals("PLAINTEXT", s.listener());
        assertEquals("User:ANONYMOUS", s.principal());
        assertEquals(cp.identity().clientId(), s.clientId());
        assertEquals("unknown", s.softwareName(), "ClientInformation.EMPTY");
        assertTrue(s.oldestInflightNanos() >= 0, "a request is in flight: " + s.oldestInflightNanos());
        assertTrue(s.pipelinedNanos() >= s.oldestInflightNanos(), "upgraded by the oldest request in flight");
        assertEquals(Set.of(), s.waitReasons(), "dispatched, no limit, no budget: reading");
        run.settle();
        ConnectionSnapshot idle = only(run);
        assertEquals(0, idle.inflightRequests());
        assertEquals(0, idle.inflightBytes());
        assertEquals(0, idle.heldResponses());
        assertEquals(-1, idle.oldestInflightNanos(), "nothing in flight");
        assertEquals(Set.of(), idle.waitReasons(), "idle and readable");
        run.finish();
        assertEquals(List.of(), run.broker.coordinator.connectionSnapshots(), "closed: forgotten");
    }

    @Test
    void aRequestInTheDispatchPhaseAndTheInflightLimitAreReasons() {
        Run run = new Run(
                new Scenario(1, 4, 2, Long.MAX_VALUE, false, List.of(Scenario.client(pAll(), pAll(), pAll())), 7));
        run.except(HANDLE, COMPLETE);
        ConnectionSnapshot s = only(run);
        assertEquals(1, s.inflightRequests());
        assertTrue(
                s.waitReasons().contains(WaitReason.AWAITING_DISPATCH),
                s.waitReasons().toString());
        run.except(COMPLETE);
        s = only(run);
        assertEquals(2, s.inflightRequests(), "at kpipe.max.inflight.requests.per.connection=2");
        assertEquals(Set.of(WaitReason.INFLIGHT_LIMIT), s.waitReasons());
        run.settle();
        run.finish();
    }

    @Test
    void aHeldExclusiveRequestIsADrain() {
        Run run = new Run(Scenario.single(Scenario.client(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH))));
        run.except(COMPLETE);
        ConnectionSnapshot s = only(run);
        assertEquals("DRAINING", s.state());
        assertEquals(2, s.inflightRequests(), "the fetch is held, not in flight");
        assertEquals(1, s.heldResponses(), "the acks=1 response waits for the acks=all one");
        assertEquals(Set.of(WaitReason.DRAIN_EXCLUSIVE), s.waitReasons());
        run.settle();
        run.finish();
    }

    @Test
    void aThrottleWindowDuringADrainIsBothReasons() {
        Run run = new Run(Scenario.single(Scenario.client(pAll().throttle(), Req.of(FETCH))));
        run.except(COMPLETE, END_THROTTLE);
        run.step(COMPLETE, 0).except(END_THROTTLE);
        ConnectionSnapshot s = only(run);
        assertEquals("DRAINING", s.state());
        assertEquals(0, s.inflightRequests(), "the produce response is written");
        assertEquals(-1, s.oldestInflightNanos());
        assertEquals(Set.of(WaitReason.THROTTLED, WaitReason.DRAIN_EXCLUSIVE), s.waitReasons());
        run.step(END_THROTTLE, 0).settle();
        run.finish();
    }

    @Test
    void connectionsWaitingForTheByteBudget() {
        Run run = new Run(new Scenario(
                        1,
                        4,
                        16,
                        Long.MAX_VALUE,
                        false,
                        List.of(
                                Scenario.client(
                                        Req.of(PRODUCE_ACKS_ALL).later().sized(30),
                                        Req.of(PRODUCE_ACKS_1).sized(30)),
                                Scenario.client(
                                        Req.of(PRODUCE_ACKS_ALL).later().sized(30),
                                        Req.of(PRODUCE_ACKS_1).sized(30)),
                                Scenario.client(
                                        Req.of(PRODUCE_ACKS_ALL).later().sized(30),
                                        Req.of(PRODUCE_ACKS_1).sized(30))),
                        11)
                .with(BackPressure.budget(100)));
        run.except(RETURN, COMPLETE);
        // Each connection wants 30 more for its next request (90 + 30 > 100): once dispatched, each waits.
        while (run.broker.enabled(false).stream().anyMatch(st -> st.type() == RETURN)) {
            run.step(
                            RETURN,
                            run.broker.enabled(false).stream()
                                    .filter(st -> st.type() == RETURN)
                                    .findFirst()
                                    .orElseThrow()
                                    .arg())
                    .only(NET);
        }
        List<ConnectionSnapshot> all = run.broker.coordinator.connectionSnapshots();
        assertEquals(3, all.size());
        for (ConnectionSnapshot s : all) {
            assertEquals(Set.of(WaitReason.BUDGET), s.waitReasons(), s.toString());
            assertEquals(1, s.inflightRequests());
            assertEquals(30, s.inflightBytes(), "the acks=all request read: " + s);
        }
        run.settle();
        run.finish();
    }

    @Test
    void storagePressure() {
        Run run = new Run(new Scenario(
                        1,
                        4,
                        16,
                        Long.MAX_VALUE,
                        false,
                        List.of(Scenario.client(
                                Req.of(PRODUCE_ACKS_1).sized(10),
                                Req.of(PRODUCE_ACKS_1).sized(10))),
                        11)
                .with(BackPressure.budget(100).pressure(1)));
        run.step(PRESSURE, 1).except(PRESSURE, TIMEOUT);
        assertEquals(Set.of(WaitReason.STORAGE_PRESSURE), only(run).waitReasons());
        run.step(PRESSURE, 0).step(TIMEOUT, 0).settle();
        assertEquals(Set.of(), only(run).waitReasons());
        run.finish();
    }

    @Test
    void aHeldReauthenticationIsADrain() {
        Run run = new Run(Scenario.single(Scenario.client(pAll(), pAll(), Req.of(SASL_REAUTH))));
        run.except(COMPLETE);
        ConnectionSnapshot s = only(run);
        assertEquals("DRAINING", s.state());
        assertEquals(2, s.inflightRequests());
        assertEquals(Set.of(WaitReason.DRAIN_REAUTHENTICATION), s.waitReasons());
        run.settle();
        run.finish();
    }

    @Test
    void disablingKpipeIsADrain() {
        Run run = new Run(Scenario.single(Scenario.client(pAll(), pAll(), Req.of(PRODUCE_ACKS_1)))
                .withEnableFlips(1));
        run.step(WRITE, 0).step(WRITE, 0).except(WRITE, COMPLETE, CONFIG);
        run.step(CONFIG, 0).except(WRITE, COMPLETE);
        ConnectionSnapshot s = only(run);
        assertEquals("DRAINING", s.state());
        assertEquals(2, s.inflightRequests());
        assertEquals(Set.of(WaitReason.DRAIN_DISABLED), s.waitReasons());
        run.settle();
        run.finish();
    }

    @Test
    void aRefusedRequestReadAheadIsACloseAfterTheDrain() {
        Run run = new Run(Scenario.single(Scenario.client(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(BAD))));
        run.except(COMPLETE);
        ConnectionSnapshot s = only(run);
        assertEquals("PIPELINED", s.state(), "no drain of kpipe's: it closes once the responses are written");
        assertEquals(2, s.inflightRequests());
        assertEquals(1, s.heldResponses());
        assertEquals(Set.of(WaitReason.CLOSE_AFTER_DRAIN), s.waitReasons());
        run.step(COMPLETE, 0).settle();
        assertEquals(List.of(), run.broker.coordinator.connectionSnapshots(), "closed");
        run.finish();
    }

    @Test
    void aPrincipalWhoseToStringThrowsShowsAsAnErrorNotAFailedDump() {
        RequestContext ctx = KafkaRequests.metadata("c-broken", 1).context();
        KafkaPrincipal broken = new KafkaPrincipal("User", "broken") {
            @Override
            public String toString() {
                throw new IllegalStateException("a principal builder's bug");
            }
        };
        RequestContext brokenContext = new RequestContext(
                ctx.header,
                ctx.connectionId,
                ctx.clientAddress,
                broken,
                ctx.listenerName,
                ctx.securityProtocol,
                ctx.clientInformation,
                ctx.fromPrivilegedListener);
        // a connection whose first request carries that principal
        ConnectionPipeline cp = new ConnectionPipeline(
                ctx.connectionId, new ProcessorPipelines(null), new PipelineStats(), () -> 0L, 0);
        cp.requestRead(
                new Object(),
                brokenContext,
                10,
                dev.kpipe.plugin.classify.PipelinedApi.PRODUCE,
                new dev.kpipe.backpressure.Reservations(
                        dev.kpipe.backpressure.ByteBudget.unbounded(() -> 0L),
                        () -> 0L,
                        new java.util.concurrent.atomic.LongAdder(),
                        new java.util.concurrent.atomic.LongAdder()),
                true);
        ConnectionSnapshot s = ConnectionSnapshot.of(cp, new InflightLimits(16, 1 << 20), 0L);
        assertEquals("error=java.lang.IllegalStateException", s.principal());
        assertEquals(ctx.connectionId, s.connectionId(), "the rest of the connection is still listed");
        assertEquals(1, s.inflightRequests());
        assertEquals(10, s.inflightBytes());
    }
}
