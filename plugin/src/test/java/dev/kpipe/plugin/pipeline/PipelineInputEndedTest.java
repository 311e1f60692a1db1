// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.DISCONNECT;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.END;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Kind;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import org.junit.jupiter.api.Test;

/**
 * The end of a client's input on the {@link FakeBroker} ({@link Kind#END}): an end of stream after a half-close, a
 * frame the network layer refuses, a failed read. Stock Kafka reads a connection's next request only after answering
 * the previous one, so it meets the end only once every earlier request is answered, and then closes; kpipe, which
 * read ahead, must answer every request it read before the end, read nothing after it, then close, and a peer reset
 * still closes at once. Gauges back to 0 in every case ({@link FakeBroker#finishAndCheckGaugesZero}).
 */
class PipelineInputEndedTest {

    private static final long MAX_STATES = 400_000;

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    private static Req p1() {
        return Req.of(PRODUCE_ACKS_1);
    }

    private static Req end() {
        return Req.of(END);
    }

    private static Client c(Req... requests) {
        return Scenario.client(requests);
    }

    private static Client disconnecting(Req... requests) {
        return new Client(List.of(requests), Integer.MAX_VALUE, true);
    }

    private static Scenario fine(Client... clients) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, true, List.of(clients), 11);
    }

    private static Scenario coarse(Client... clients) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, false, List.of(clients), 11);
    }

    @Test
    void aHalfCloseAfterTwelveAcksAllProducesAnswersAllTwelveThenCloses() {
        List<Req> requests = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            requests.add(pAll());
        }
        requests.add(end());
        Run run = new Run(Scenario.single(new Client(requests, Integer.MAX_VALUE, false)));
        run.except(COMPLETE); // the follower has not acknowledged yet: every produce waits in the purgatory
        FakeBroker.Conn conn = run.conn(0);
        assertEquals(conn.requests.get(12), conn.inputEnded, "kpipe read ahead to the end of the input");
        assertTrue(conn.closeDeferred, "kpipe took the close over");
        assertTrue(conn.open, "the connection stays open while the produces wait");
        assertTrue(conn.channel.isMuted(), "and reads nothing more");
        assertEquals(12, run.kpipe(0).inflight().size());
        assertEquals(1, run.stats().deferredCloses());
        assertTrue(run.received(0).isEmpty());

        run.settle(); // checks: all 12 answered in order, then closed
        assertFalse(conn.open, "closed once every response was written");
        assertEquals(run.expected(0), run.received(0));
        run.finish();
    }

    @Test
    void theEndOfTheInputWithNothingInFlightIsClosedByTheBrokerAtOnce() {
        // depth 1: the client writes its next request, and the end, only after the previous answer
        Run run = new Run(Scenario.single(new Client(List.of(p1(), Req.of(PRODUCE_ACKS_0), p1(), end()), 1, false)));
        run.settle();
        assertFalse(run.conn(0).open);
        assertFalse(run.conn(0).closeDeferred, "nothing to answer first");
        assertEquals(0, run.stats().deferredCloses());
        assertEquals(1, run.stats().upgrades());
        run.finish();
    }

    @Test
    void theEndOfTheInputOnAClassicConnectionIsTheBrokersOwn() {
        Run run = new Run(Scenario.single(c(Req.of(METADATA), end())));
        run.settle();
        assertFalse(run.conn(0).open);
        assertFalse(run.conn(0).closeDeferred);
        assertEquals(0, run.stats().upgrades());
        run.finish();
    }

    @Test
    void aPeerResetAfterTheEndClosesAtOnce() {
        Run run = new Run(Scenario.single(disconnecting(pAll(), pAll(), end())));
        run.except(COMPLETE, DISCONNECT);
        FakeBroker.Conn conn = run.conn(0);
        assertTrue(conn.closeDeferred);
        assertTrue(conn.open);
        run.step(DISCONNECT, 0).except(COMPLETE);
        assertFalse(conn.open, "a reset closes the connection without waiting for the responses");
        run.settle();
        run.finish();
    }

    @Test
    void theEndOfTheInputInEveryInterleaving() {
        List<Scenario> scenarios = List.of(
                fine(c(pAll(), p1(), end())),
                coarse(c(p1(), Req.of(PRODUCE_ACKS_0), end())),
                coarse(c(pAll(), Req.of(PRODUCE_ACKS_1).throttle(), end())),
                coarse(c(pAll(), Req.of(FETCH), end())),
                coarse(c(pAll(), Req.of(METADATA), pAll(), end())),
                coarse(disconnecting(pAll(), p1(), end())),
                coarse(c(pAll(), end()), c(p1(), end())),
                coarse(c(Req.of(METADATA), end()), c(pAll(), pAll(), end())));
        Set<String> covered = new TreeSet<>();
        long states = 0;
        for (Scenario s : scenarios) {
            Explorer.Result r = Explorer.explore(s, MAX_STATES);
            states += r.states();
            covered.addAll(r.covered());
        }
        for (String situation : List.of(
                "input ended on a pipelined connection",
                "input ended on a classic connection",
                "close deferred after the input ended",
                "input ended with several requests unanswered",
                "deferred close",
                "close with parked responses")) {
            assertTrue(covered.contains(situation), situation + " never happened; covered " + covered);
        }
        System.out.printf("PipelineInputEndedTest: %,d states%n", states);
    }

    /**
     * Random scenarios (several connections and processors, drains, throttles, resets, refused requests), each client
     * ending its input after its requests, under a random interleaving: every invariant holds on every step, every
     * request read before the end is answered in order before the close, nothing after it is read, no wedge, gauges 0.
     */
    @Property(seed = "2424", tries = 300, edgeCases = EdgeCasesMode.NONE)
    void anyInterleavingWithEndedInputsKeepsTheInvariants(
            @ForAll("endingScenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        PipelinePropertiesTest.run(scenario, choices);
    }

    @Provide
    Arbitrary<List<Integer>> choices() {
        return Arbitraries.integers()
                .between(0, 999)
                .list()
                .ofMaxSize(1000)
                .withSizeDistribution(RandomDistribution.uniform());
    }

    @Provide
    Arbitrary<Scenario> endingScenarios() {
        Arbitrary<Kind> kinds = Arbitraries.frequency(
                net.jqwik.api.Tuple.of(5, PRODUCE_ACKS_ALL),
                net.jqwik.api.Tuple.of(5, PRODUCE_ACKS_1),
                net.jqwik.api.Tuple.of(2, PRODUCE_ACKS_0),
                net.jqwik.api.Tuple.of(2, METADATA),
                net.jqwik.api.Tuple.of(1, FETCH),
                net.jqwik.api.Tuple.of(1, Kind.BAD));
        Arbitrary<Integer> percent = Arbitraries.integers().between(0, 99);
        Arbitrary<Req> requests = Combinators.combine(kinds, percent, percent)
                .as((kind, later, throttle) -> new Req(
                        kind,
                        (kind == PRODUCE_ACKS_ALL || kind == FETCH) && later < 60,
                        kind != Kind.BAD && throttle < 8,
                        false,
                        false));
        Arbitrary<Client> client = Combinators.combine(
                        requests.list().ofMinSize(0).ofMaxSize(7),
                        Arbitraries.of(Integer.MAX_VALUE, Integer.MAX_VALUE, 2),
                        Arbitraries.of(true, false, false))
                .as((reqs, depth, mayDisconnect) -> {
                    List<Req> withEnd = new ArrayList<>(reqs);
                    withEnd.add(end());
                    return new Client(withEnd, depth, mayDisconnect);
                });
        return Combinators.combine(
                        Arbitraries.integers().between(1, 2),
                        Arbitraries.integers().between(1, 3),
                        Arbitraries.of(2, 3, 16),
                        Arbitraries.of(true, false),
                        client.list().ofMinSize(1).ofMaxSize(3),
                        Arbitraries.longs())
                .as((procs, handlers, maxInflight, fineGrained, clients, seed) ->
                        new Scenario(procs, handlers, maxInflight, Long.MAX_VALUE, fineGrained, clients, seed));
    }
}
