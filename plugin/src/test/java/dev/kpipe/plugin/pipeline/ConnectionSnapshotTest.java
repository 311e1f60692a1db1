package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.HANDLE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.List;
import java.util.Set;
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
        assertEquals(cp.id, s.connectionId());
        assertEquals("PIPELINED", s.state());
        assertEquals(3, s.inflightRequests(), "three read, none answered");
        assertEquals(cp.inflightBytes, s.inflightBytes());
        assertEquals(1, s.heldResponses(), "the newest response waits for the two before it");
        assertEquals("PLAINTEXT", s.listener());
        assertEquals("User:ANONYMOUS", s.principal());
        assertEquals(cp.context.clientId(), s.clientId());
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
        Run run = new Run(new Scenario(1, 4, 2, Long.MAX_VALUE, false,
            List.of(Scenario.client(pAll(), pAll(), pAll())), 7));
        run.except(HANDLE, COMPLETE);
        ConnectionSnapshot s = only(run);
        assertEquals(1, s.inflightRequests());
        assertTrue(s.waitReasons().contains(WaitReason.AWAITING_DISPATCH), s.waitReasons().toString());
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
}
