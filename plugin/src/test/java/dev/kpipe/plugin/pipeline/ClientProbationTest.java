// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.DISCONNECT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.END_THROTTLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.FakeBroker.Step;
import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import dev.kpipe.plugin.testkit.KafkaRequests.Parsed;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

/**
 * Probation ({@link ThrottledClients}, {@link WaitReason#CLIENT_THROTTLED}) on the fake broker: three connections of
 * one client (one principal, one client id). The first is throttled and closes with its window open; the second, a
 * reconnect while the client is marked, gets one request in at a time, as stock Kafka reads it, until a response of
 * the client is written with no window open; then it pipelines, and so does a third connection from the start.
 */
class ClientProbationTest {

    private static final String CLIENT_ID = "slow-reader";

    private static Req produce() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    /** Every client of the scenario gets the same client id (the fake's contexts carry one per connection). */
    private static Scenario sharingClientId(Scenario s) {
        for (List<Parsed> list : s.parsed) {
            list.replaceAll(p -> new Parsed(
                    ThrottledClientsTest.context(p.context(), KafkaPrincipal.ANONYMOUS, CLIENT_ID),
                    p.body(),
                    p.sizeInBytes()));
        }
        return s;
    }

    /** @return steps of every kind but {@code held}, and a client's writes only if it is {@code writer} */
    private static Predicate<Step> only(int writer, FakeBroker.StepType... held) {
        Set<FakeBroker.StepType> h = Set.of(held);
        return s -> !h.contains(s.type()) && (s.type() != WRITE || s.arg() == writer);
    }

    @Test
    void aReconnectOfAThrottledClientGetsOneRequestInUntilItsClientIsUnderItsQuota() {
        Scenario scenario = sharingClientId(new Scenario(
                1,
                2,
                16,
                Long.MAX_VALUE,
                false,
                List.of(
                        new Client(List.of(produce().throttle(), produce(), produce()), Integer.MAX_VALUE, true),
                        Scenario.client(produce().throttle(), produce(), produce(), produce()),
                        Scenario.client(produce(), produce(), produce())),
                42));
        Run run = new Run(scenario);
        FakeBroker b = run.broker;

        // Connection 0 pipelines all three; its first response opens a window; it closes with the window open.
        b.runFair(Run.MAX_STEPS, only(0, COMPLETE, END_THROTTLE));
        assertEquals(3, run.kpipe(0).inflight().size(), "pipelined before any throttle");
        run.step(COMPLETE, 0);
        b.runFair(Run.MAX_STEPS, only(0, COMPLETE, END_THROTTLE));
        assertTrue(run.kpipe(0).throttled());
        run.step(DISCONNECT, 0);
        b.runFair(Run.MAX_STEPS, only(0, COMPLETE, END_THROTTLE));
        assertEquals(1, b.coordinator.throttledClients().size(), "closed with a window open: still marked");

        // Connection 1, the reconnect: on probation, one request in.
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));
        assertEquals(1, run.kpipe(1).inflight().size(), "one request in, as stock");
        assertEquals(4, b.conns.get(1).written, "the client wrote all four");
        assertTrue(snapshot(run, 1).waitReasons().contains(WaitReason.CLIENT_THROTTLED));
        assertEquals(1, run.stats().waits(WaitReason.CLIENT_THROTTLED));

        // Its first response is throttled too: still one at a time, its own window mutes it as before.
        run.step(COMPLETE, b.completions.indexOf(run.request(1, 0)));
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));
        assertTrue(run.kpipe(1).throttled());
        assertEquals(0, run.kpipe(1).inflight().size(), "muted by its own window");
        int window = b.throttleEnds.indexOf(run.request(1, 0));
        run.step(END_THROTTLE, window);
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));
        assertEquals(1, run.kpipe(1).inflight().size(), "window closed, client still marked: one in");
        assertEquals(2, run.stats().waits(WaitReason.CLIENT_THROTTLED));

        // Its next response carries no window: the client is under its quota, unmarked; connection 1 pipelines.
        run.step(COMPLETE, b.completions.indexOf(run.request(1, 1)));
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));
        assertEquals(0, b.coordinator.throttledClients().size(), "unmarked by a response without a window");
        assertEquals(2, run.kpipe(1).inflight().size(), "the last two read together");
        assertFalse(snapshot(run, 1).waitReasons().contains(WaitReason.CLIENT_THROTTLED));

        // A new connection of the client now pipelines from its first request.
        b.runFair(Run.MAX_STEPS, only(2, COMPLETE, END_THROTTLE));
        assertEquals(3, run.kpipe(2).inflight().size());
        assertEquals(2, run.stats().waits(WaitReason.CLIENT_THROTTLED));

        run.settle();
        run.assertReceivedInOrder(1);
        run.assertReceivedInOrder(2);
        run.finish();
    }

    /**
     * Kafka's produce quota throttles PRODUCE responses only: a METADATA response without a window, on a connection on
     * probation, does not unmark the client; the produce after it is still read alone.
     */
    @Test
    void aResponseOfAnotherApiDoesNotUnmarkTheClient() {
        Scenario scenario = sharingClientId(new Scenario(
                1,
                2,
                16,
                Long.MAX_VALUE,
                false,
                List.of(
                        new Client(List.of(produce().throttle(), produce()), Integer.MAX_VALUE, true),
                        Scenario.client(produce().throttle(), Req.of(METADATA), produce(), produce())),
                7));
        Run run = new Run(scenario);
        FakeBroker b = run.broker;

        b.runFair(Run.MAX_STEPS, only(0, COMPLETE, END_THROTTLE));
        run.step(COMPLETE, 0);
        b.runFair(Run.MAX_STEPS, only(0, COMPLETE, END_THROTTLE));
        assertTrue(run.kpipe(0).throttled());
        run.step(DISCONNECT, 0);
        b.runFair(Run.MAX_STEPS, only(0, COMPLETE, END_THROTTLE));

        // The reconnect: its first produce, throttled; the window ends; then METADATA is read alone and answered.
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));
        assertEquals(1, run.kpipe(1).inflight().size());
        run.step(COMPLETE, b.completions.indexOf(run.request(1, 0)));
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));
        run.step(END_THROTTLE, b.throttleEnds.indexOf(run.request(1, 0)));
        b.runFair(Run.MAX_STEPS, only(1, COMPLETE, END_THROTTLE));

        assertEquals(1, b.coordinator.throttledClients().size(), "METADATA's response did not unmark the client");
        assertEquals(1, run.kpipe(1).inflight().size(), "the produce after it is read alone");
        assertEquals(4, b.conns.get(1).written);

        run.settle();
        run.assertReceivedInOrder(1);
        run.finish();
    }

    private static ConnectionSnapshot snapshot(Run run, int c) {
        return run.broker.coordinator.connectionSnapshots().stream()
                .filter(s -> s.connectionId().equals(run.conn(c).id))
                .findFirst()
                .orElseThrow();
    }
}
