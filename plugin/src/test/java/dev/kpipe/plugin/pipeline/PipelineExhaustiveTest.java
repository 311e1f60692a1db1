// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_EXCLUDED;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_TRANSACTIONAL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.SASL_REAUTH;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every interleaving of small scenarios: one connection (or two), up to four requests, every order
 * of reads, handler dispatches and returns, completions, sends, throttle expiries, SASL
 * re-authentications and (where allowed) the client's disconnection. {@link Explorer} checks every reachable state.
 */
class PipelineExhaustiveTest {

    private static final long MAX_STATES = 400_000;

    private static final List<Req> ALPHABET = List.of(
            Req.of(PRODUCE_ACKS_1),
            Req.of(PRODUCE_ACKS_ALL).later(),
            Req.of(PRODUCE_ACKS_0),
            Req.of(PRODUCE_ACKS_1).throttle(),
            Req.of(FETCH).later(),
            Req.of(METADATA),
            Req.of(PRODUCE_TRANSACTIONAL).later());

    private static Scenario coarse(int maxInflight, Client... clients) {
        return new Scenario(1, 2, maxInflight, Long.MAX_VALUE, false, List.of(clients), 5);
    }

    private static Scenario fine(int maxInflight, long maxBytes, Client... clients) {
        return new Scenario(1, 2, maxInflight, maxBytes, true, List.of(clients), 5);
    }

    private static Client c(Req... requests) {
        return Scenario.client(requests);
    }

    private static Client disconnecting(Req... requests) {
        return new Client(List.of(requests), Integer.MAX_VALUE, true);
    }

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    /** Every ordered pair of request classes on one connection, every interleaving (whole run-loop phases). */
    @Test
    void everyPairOfRequestClassesInEveryInterleaving(TestReporter reporter) {
        long states = 0;
        for (Req first : ALPHABET) {
            for (Req second : ALPHABET) {
                states += Explorer.explore(coarse(16, c(first, second)), MAX_STATES)
                        .states();
            }
        }
        reporter.publishEntry("states", Long.toString(states));
        assertTrue(states > 10_000, "explored " + states);
    }

    static Stream<Arguments> scenarios() {
        List<Arguments> list = new ArrayList<>();
        list.add(Arguments.of(
                "drain: exclusive fetch behind two produces",
                fine(16, Long.MAX_VALUE, c(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH)))));
        list.add(Arguments.of(
                "downgrade then upgrade again",
                fine(16, Long.MAX_VALUE, c(Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_EXCLUDED), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "acks=0 between acknowledged produces",
                fine(16, Long.MAX_VALUE, c(pAll(), Req.of(PRODUCE_ACKS_0), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "throttle starts while the drain is pending",
                fine(16, Long.MAX_VALUE, c(pAll().throttle(), Req.of(FETCH), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "two overlapping throttle windows and a drain",
                coarse(
                        16,
                        c(
                                pAll().throttle(),
                                Req.of(PRODUCE_ACKS_1).throttle(),
                                Req.of(FETCH).later()))));
        list.add(Arguments.of(
                "acks=0 produce error closes the connection mid-pipeline",
                fine(16, Long.MAX_VALUE, c(pAll(), Req.of(PRODUCE_ACKS_0).closing(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "in-flight limit 2, four acks=all produces",
                coarse(2, c(pAll(), pAll(), pAll(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "byte limit below one request",
                fine(16, 1, c(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_0)))));
        list.add(Arguments.of(
                "metadata, produce, metadata, produce",
                coarse(
                        16,
                        c(
                                Req.of(METADATA),
                                Req.of(PRODUCE_ACKS_1),
                                Req.of(METADATA).throttle(),
                                pAll()))));
        list.add(Arguments.of(
                "disconnect at any point: parked responses and a held fetch",
                coarse(16, disconnecting(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH), Req.of(PRODUCE_ACKS_0)))));
        list.add(Arguments.of(
                "disconnect at any point: throttled pipeline",
                coarse(16, disconnecting(pAll().throttle(), Req.of(PRODUCE_ACKS_0), Req.of(FETCH)))));
        list.add(Arguments.of(
                "re-authentication behind acks=all and acks=1 produces, then a produce",
                fine(
                        16,
                        Long.MAX_VALUE,
                        c(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "re-authentication behind a throttled produce",
                coarse(16, c(pAll().throttle(), Req.of(SASL_REAUTH), pAll()))));
        list.add(Arguments.of(
                "re-authentication on a classic connection, then a pipeline, then again",
                coarse(16, c(Req.of(METADATA), Req.of(SASL_REAUTH), pAll(), Req.of(SASL_REAUTH)))));
        list.add(Arguments.of(
                "re-authentication while kpipe.enable is turned off and on again at any point",
                coarse(16, c(pAll(), Req.of(SASL_REAUTH), pAll())).withEnableFlips(2)));
        list.add(Arguments.of(
                "disconnect at any point around a deferred re-authentication",
                coarse(
                        16,
                        disconnecting(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "two connections, one processor",
                coarse(16, c(Req.of(PRODUCE_ACKS_1), Req.of(FETCH)), c(pAll().throttle()))));
        list.add(Arguments.of(
                "two connections on two processors, one disconnects",
                new Scenario(
                        2,
                        2,
                        16,
                        Long.MAX_VALUE,
                        false,
                        List.of(disconnecting(pAll(), Req.of(FETCH)), c(Req.of(PRODUCE_ACKS_0))),
                        5)));
        return list.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyInterleaving(String name, Scenario scenario, TestReporter reporter) {
        Explorer.Result result = Explorer.explore(scenario, MAX_STATES);
        reporter.publishEntry(name, result.toString());
        assertTrue(result.quiescent() > 0);
    }

    private static Req p1(int size) {
        return Req.of(PRODUCE_ACKS_1).sized(size);
    }

    private static Req pAll(int size) {
        return pAll().sized(size);
    }

    private static Scenario budgeted(Scenario.BackPressure bp, Client... clients) {
        return coarse(16, clients).with(bp);
    }

    /**
     * Two connections sharing a budget of about two requests (10 bytes), sizes varying, one request larger than the
     * whole budget; storage pressure may saturate once at any point; the budget's admitted() callback may run late
     * (its own step). Checked on every state: the budget's accounting, FIFO grants, no unmute while saturated; on
     * every quiescent state: no wedge once the pressure has cleared; at the end, the budget empty.
     */
    static Stream<Arguments> budgetScenarios() {
        Scenario.BackPressure b10 = Scenario.BackPressure.budget(10);
        List<Arguments> list = new ArrayList<>();
        // Strict liveness: requests of at most half the budget, so an idle connection's reservation always leaves
        // room for the other's (see PipelineBudgetScenariosTest#idleConnectionsReservationsStarveAWaiterForever).
        list.add(Arguments.of(
                "budget: two connections, budget of two requests", budgeted(b10, c(p1(5), p1(5)), c(pAll(5)))));
        list.add(Arguments.of(
                "budget: storage pressure saturates once, anywhere; a classic connection",
                budgeted(b10.pressure(1), c(p1(5), p1(3)), c(Req.of(METADATA)))));
        list.add(Arguments.of(
                "budget: delayed admitted() callbacks, a disconnect at any point",
                budgeted(b10.delayed(), disconnecting(p1(5), p1(5)), c(p1(5)))));
        list.add(Arguments.of(
                "budget: a request larger than the budget admitted alone; pressure; delayed callbacks",
                budgeted(b10.pressure(1).delayed(), c(p1(4), pAll(15), p1(3)))));
        list.add(Arguments.of(
                "budget: queue-based pressure (BrokerQueuePressure), acks=0, delayed callbacks",
                budgeted(
                        b10.queue(2, 1).delayed(),
                        c(pAll(5), Req.of(PRODUCE_ACKS_0).sized(5)),
                        c(p1(5)))));
        list.add(Arguments.of(
                "budget: re-authentication drains while the other connection waits, delayed callbacks",
                budgeted(b10.delayed(), c(p1(5), Req.of(SASL_REAUTH), p1(5)), c(p1(5)))));
        list.add(Arguments.of(
                "budget: drain and downgrade while the other connection waits, delayed callbacks",
                budgeted(b10.delayed(), c(p1(5), Req.of(FETCH).sized(3)), c(p1(5)))));
        // A request larger than the budget beside another connection: the idle-reservation starvation is accepted,
        // and counted, only in exactly that state.
        list.add(Arguments.of(
                "budget (idle starvation accepted): a request larger than the budget, two connections",
                budgeted(b10.tolerant(), c(p1(4), p1(15)), c(p1(6)))));
        return list.stream();
    }

    /** The explorer reaches a client closing while its re-authentication is held (the random properties rarely do). */
    @Test
    void aCloseWhileTheReauthenticationIsHeldIsExplored() {
        Explorer.Result result = Explorer.explore(
                coarse(16, disconnecting(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(SASL_REAUTH), Req.of(PRODUCE_ACKS_1))),
                MAX_STATES);
        assertTrue(
                result.covered().contains("close with a held re-authentication"), () -> "covered: " + result.covered());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("budgetScenarios")
    void everyInterleavingWithABudgetAndStoragePressure(String name, Scenario scenario, TestReporter reporter) {
        Explorer.Result result = Explorer.explore(scenario, MAX_STATES);
        reporter.publishEntry(name, result.toString());
        assertTrue(result.quiescent() > 0);
    }
}
