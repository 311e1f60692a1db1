// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.FakeBroker.Step;
import dev.kpipe.plugin.pipeline.FakeBroker.StepType;
import dev.kpipe.spi.NetworkEventListener;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/** A readable driver of a {@link FakeBroker} for example-based tests. */
final class Run {
    static final int MAX_STEPS = 20_000;

    final FakeBroker broker;

    Run(Scenario scenario) {
        broker = new FakeBroker(scenario);
    }

    /** A run with {@code plugin} installed instead of kpipe ({@link FakeBroker#FakeBroker(Scenario, NetworkEventListener)}). */
    Run(Scenario scenario, NetworkEventListener<FakeBroker.Request, FakeBroker.Response> plugin) {
        broker = new FakeBroker(scenario, plugin);
    }

    /** Runs every kind of step but these, fairly, until none is enabled. */
    Run except(StepType... held) {
        Set<StepType> excluded = held.length == 0 ? EnumSet.noneOf(StepType.class) : EnumSet.of(held[0], held);
        broker.runFair(MAX_STEPS, s -> !excluded.contains(s.type()));
        return this;
    }

    /** Runs only these kinds of step, fairly, until none is enabled. */
    Run only(StepType... allowed) {
        Set<StepType> included = EnumSet.of(allowed[0], allowed);
        broker.runFair(MAX_STEPS, s -> included.contains(s.type()));
        return this;
    }

    /** Runs one step, which must be enabled. */
    Run step(StepType type, int arg) {
        Step step = new Step(type, arg);
        List<Step> enabled = broker.enabled(true);
        assertTrue(enabled.contains(step), () -> step + " is not enabled: " + enabled + "\n" + broker.dump());
        broker.apply(step);
        return this;
    }

    /** Runs everything to quiescence and checks that every client got every response, in order. */
    Run settle() {
        broker.runFair(MAX_STEPS);
        broker.checkAllAnswered();
        return this;
    }

    /** Runs every enabled step fairly until client c received every response it expects. */
    Run progressUntilAnswered(int c) {
        broker.runFairUntil(MAX_STEPS, () -> received(c).equals(expected(c)));
        return this;
    }

    /** Closes every client and checks that kpipe forgot everything (gauges 0). */
    void finish() {
        broker.finishAndCheckGaugesZero(MAX_STEPS);
    }

    FakeBroker.Conn conn(int c) {
        return broker.conns.get(c);
    }

    FakeBroker.Request request(int c, int i) {
        return conn(c).requests.get(i);
    }

    /** @return kpipe's state for the connection, or null while Kafka owns it */
    ConnectionPipeline kpipe(int c) {
        return broker.owned(c);
    }

    PipelineStats stats() {
        return broker.stats;
    }

    List<Integer> received(int c) {
        return conn(c).received.stream().map(FakeBroker.Request::correlationId).toList();
    }

    /** @return the correlation ids a client expects back, in the order it sent the requests */
    List<Integer> expected(int c) {
        return conn(c).requests.stream()
                .filter(r -> !r.spec.kind().noResponse())
                .map(FakeBroker.Request::correlationId)
                .toList();
    }

    void assertReceivedInOrder(int c) {
        assertEquals(expected(c), received(c), "responses of client " + c + " in request order");
    }
}
