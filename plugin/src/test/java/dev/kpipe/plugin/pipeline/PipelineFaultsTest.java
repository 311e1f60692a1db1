// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.BAD;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Faults;
import dev.kpipe.plugin.pipeline.Scenario.Kind;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * Refused requests and plugin faults on the {@link FakeBroker}.
 *
 * <p>A request the broker refuses (it does not parse, its API or version is unsupported) after kpipe read ahead:
 * stock Kafka answers every earlier request of the connection before it reads the bad one, then closes the
 * connection; so must kpipe (it defers the close until the earlier responses are written).
 *
 * <p>Faults: the broker's topic id resolver (classification), the storage-side pressure signal, the selector's
 * {@code unmute}, and reading a response's request while kpipe orders responses, each throwing now and then. kpipe
 * counts every fault ({@code plugin-fault-total}, {@code classification-fallback-total}: the fake checks the counts
 * against what it injected after every step), handles the request concerned classically, never throws into the
 * broker, and every other invariant holds: order, one dispatch and one send per connection, no wedge, gauges back to
 * 0.
 */
class PipelineFaultsTest {

    private static final long MAX_STATES = 400_000;

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    private static Req p1() {
        return Req.of(PRODUCE_ACKS_1);
    }

    private static Req bad() {
        return Req.of(BAD);
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

    // ------------------------------------------------------------------ refused requests

    @Test
    void aRefusedRequestReadAheadClosesTheConnectionOnlyOnceEveryEarlierResponseIsWritten() {
        Run run = new Run(Scenario.single(c(pAll(), p1(), bad(), p1())));
        run.except(COMPLETE);
        FakeBroker.Conn conn = run.conn(0);
        assertEquals(conn.requests.get(2), conn.rejected, "kpipe read ahead to the refused request");
        assertTrue(conn.closeDeferred, "kpipe took the close over");
        assertTrue(conn.open, "the connection stays open while the acks=all produce waits");
        assertTrue(conn.channel.isMuted(), "and reads nothing more");
        assertEquals(1, run.stats().deferredCloses());
        assertTrue(run.received(0).isEmpty());

        run.step(COMPLETE, 0).settle(); // checks: both earlier responses in order, then closed
        assertFalse(conn.open, "closed once both earlier responses were written");
        assertEquals(
                List.of(run.request(0, 0).correlationId(), run.request(0, 1).correlationId()), run.received(0));
        assertEquals(3, conn.requests.stream().filter(r -> r.read).count(), "the request after it is never read");
        run.finish();
    }

    @Test
    void aRefusedFirstRequestClosesAClassicConnectionAtOnce() {
        Run run = new Run(Scenario.single(c(bad(), p1())));
        run.settle();
        assertFalse(run.conn(0).open);
        assertFalse(run.conn(0).closeDeferred);
        assertEquals(0, run.stats().deferredCloses());
        assertEquals(0, run.stats().upgrades());
        run.finish();
    }

    @Test
    void aRefusedRequestWithNothingInFlightIsClosedByTheBrokerAtOnce() {
        // depth 1: the client writes its next request only after the previous answer
        Run run = new Run(Scenario.single(new Client(List.of(p1(), Req.of(PRODUCE_ACKS_0), p1(), bad()), 1, false)));
        run.settle();
        assertFalse(run.conn(0).open);
        assertFalse(run.conn(0).closeDeferred, "nothing to answer first");
        assertEquals(1, run.stats().upgrades());
        run.finish();
    }

    @Test
    void refusedRequestsInEveryInterleaving(TestReporter reporter) {
        List<Scenario> scenarios = List.of(
                fine(c(pAll(), p1(), bad(), p1())),
                coarse(c(p1(), Req.of(PRODUCE_ACKS_0), bad())),
                coarse(c(pAll(), Req.of(PRODUCE_ACKS_1).throttle(), bad())),
                coarse(c(pAll(), Req.of(FETCH), bad())),
                coarse(disconnecting(pAll(), p1(), bad())),
                coarse(c(pAll(), bad()), c(p1())),
                coarse(c(bad(), p1()), c(pAll(), bad())));
        explore(
                reporter,
                Set.of(
                        "refused request on a pipelined connection",
                        "refused request on a classic connection",
                        "close deferred",
                        "deferred close",
                        "close with parked responses"),
                scenarios.toArray(Scenario[]::new));
    }

    // ------------------------------------------------------------------ faults

    @Test
    void classificationFaultsInEveryInterleaving(TestReporter reporter) {
        Req p1Id = p1().byId();
        Req pAllId = pAll().byId();
        explore(
                reporter,
                Set.of("classification fault", "drain"),
                fine(c(pAllId, p1Id)).with(new Faults(2, 0, 0, -1)),
                coarse(c(p1Id, pAllId, p1Id)).with(new Faults(2, 0, 0, -1)),
                coarse(c(pAllId, Req.of(METADATA), p1Id, p1Id)).with(new Faults(3, 0, 0, -1)),
                coarse(c(pAllId, p1Id), c(p1Id)).with(new Faults(2, 0, 0, -1)));
    }

    @Test
    void storagePressureSignalFaultsFallBackToClassicInEveryInterleaving(TestReporter reporter) {
        // the fake fails the run if kpipe unmutes a connection with requests in flight right after the check threw
        explore(
                reporter,
                Set.of("signal fault"),
                fine(c(pAll(), p1())).with(new Faults(0, 2, 0, -1)),
                coarse(c(pAll(), p1(), pAll())).with(new Faults(0, 2, 0, -1)),
                coarse(c(pAll(), p1(), Req.of(PRODUCE_ACKS_0), p1())).with(new Faults(0, 3, 0, -1)),
                coarse(c(pAll(), p1()), c(p1())).with(new Faults(0, 2, 0, -1)),
                coarse(disconnecting(pAll(), pAll(), p1()))
                        .with(Scenario.BackPressure.NONE.pressure(1))
                        .with(new Faults(0, 2, 0, -1)));
    }

    @Test
    void unmuteFaultsInEveryInterleaving(TestReporter reporter) {
        explore(
                reporter,
                Set.of("unmute fault"),
                fine(c(pAll(), p1())).with(new Faults(0, 0, 2, -1)),
                coarse(c(p1(), pAll(), p1())).with(new Faults(0, 0, 2, -1)),
                coarse(c(pAll(), p1(), Req.of(FETCH), p1())).with(new Faults(0, 0, 3, -1)),
                coarse(c(p1(), pAll()), c(p1())).with(new Faults(0, 0, 2, -1)));
    }

    /**
     * kpipe holds a response (an earlier one of its connection is not written yet) and, in the same {@code
     * onResponseReady}, fails to read the next response it takes from the broker's queue: that response goes to the
     * broker as it comes (it is a classic connection's, so that is right), the held one stays held and is handed over
     * exactly once, in its turn. (Had kpipe thrown instead, the broker's hook would have processed the dequeued
     * response again, out of turn, and lost the other.)
     */
    @Test
    void aResponseKpipeCannotReadGoesToTheBrokerAndHeldOnesStayHeld(TestReporter reporter) {
        explore(
                reporter,
                Set.of("requestOf fault while kpipe holds responses"),
                coarse(c(pAll(), p1()), c(Req.of(METADATA))).with(new Faults(0, 0, 0, 1)),
                coarse(c(pAll(), p1()), c(Req.of(FETCH).later())).with(new Faults(0, 0, 0, 1)));
    }

    private static void explore(TestReporter reporter, Set<String> mustCover, Scenario... scenarios) {
        long states = 0;
        java.util.Set<String> covered = new java.util.TreeSet<>();
        for (Scenario s : scenarios) {
            long t0 = System.nanoTime();
            Explorer.Result r = Explorer.explore(s, MAX_STATES);
            System.out.printf(
                    "PipelineFaultsTest: %,d states in %d ms: %s%n",
                    r.states(), (System.nanoTime() - t0) / 1_000_000, s);
            states += r.states();
            covered.addAll(r.covered());
        }
        reporter.publishEntry("states", Long.toString(states));
        for (String situation : mustCover) {
            assertTrue(covered.contains(situation), situation + " never happened; covered " + covered);
        }
    }

    // ------------------------------------------------------------------ random scenarios

    /**
     * Random scenarios (several connections and processors, refused requests, drains, throttles, disconnections) with
     * random faults of the resolver, the signal (which also saturates now and then) and {@code unmute}, under a random
     * interleaving: every invariant holds on every step, the fault counters match what was injected, no wedge, gauges
     * 0 at the end.
     */
    @Property(seed = "1409", tries = 600, edgeCases = EdgeCasesMode.NONE)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void anyInterleavingWithFaultsAndRefusedRequestsKeepsTheInvariants(
            @ForAll("faultyScenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        FakeBroker broker = PipelinePropertiesTest.run(scenario, choices);
        for (String situation : List.of(
                "classification fault",
                "signal fault",
                "unmute fault",
                "refused request on a pipelined connection",
                "close deferred")) {
            Statistics.label(situation).collect(broker.coverage.containsKey(situation));
        }
        Statistics.label("classification fault").coverage(c -> c.check(true).percentage(p -> p >= 10));
        Statistics.label("signal fault").coverage(c -> c.check(true).percentage(p -> p >= 10));
        Statistics.label("unmute fault").coverage(c -> c.check(true).percentage(p -> p >= 10));
        Statistics.label("close deferred").coverage(c -> c.check(true).percentage(p -> p >= 3));
    }

    @Provide
    Arbitrary<List<Integer>> choices() {
        return Arbitraries.integers()
                .between(0, 999)
                .list()
                .ofMaxSize(1500)
                .withSizeDistribution(RandomDistribution.uniform());
    }

    @Provide
    Arbitrary<Scenario> faultyScenarios() {
        Arbitrary<Kind> kinds = Arbitraries.frequency(
                net.jqwik.api.Tuple.of(5, PRODUCE_ACKS_ALL),
                net.jqwik.api.Tuple.of(5, PRODUCE_ACKS_1),
                net.jqwik.api.Tuple.of(2, PRODUCE_ACKS_0),
                net.jqwik.api.Tuple.of(2, METADATA),
                net.jqwik.api.Tuple.of(1, FETCH),
                net.jqwik.api.Tuple.of(1, BAD));
        Arbitrary<Integer> percent = Arbitraries.integers().between(0, 99);
        Arbitrary<Req> requests = Combinators.combine(kinds, percent, percent, percent)
                .as((kind, later, throttle, byId) -> new Req(
                        kind,
                        (kind == PRODUCE_ACKS_ALL || kind == FETCH) && later < 60,
                        kind != BAD && throttle < 8,
                        false,
                        kind.name().startsWith("PRODUCE") && byId < 50));
        Arbitrary<Client> client = Combinators.combine(
                        requests.list().ofMinSize(1).ofMaxSize(7),
                        Arbitraries.of(Integer.MAX_VALUE, Integer.MAX_VALUE, 2),
                        Arbitraries.of(true, false, false))
                .as(Client::new);
        Arbitrary<Scenario> base = Combinators.combine(
                        Arbitraries.integers().between(1, 2),
                        Arbitraries.integers().between(1, 3),
                        Arbitraries.of(2, 3, 16),
                        Arbitraries.of(true, false),
                        client.list().ofMinSize(1).ofMaxSize(3),
                        Arbitraries.longs())
                .as((procs, handlers, maxInflight, fineGrained, clients, seed) ->
                        new Scenario(procs, handlers, maxInflight, Long.MAX_VALUE, fineGrained, clients, seed));
        Arbitrary<Integer> every = Arbitraries.of(0, 2, 3, 5);
        return Combinators.combine(
                        base, every, every, every, Arbitraries.integers().between(0, 2))
                .as((s, names, signal, unmute, windows) -> s.with(Scenario.BackPressure.NONE.pressure(windows))
                        .with(new Faults(names, signal, unmute, -1)));
    }
}
