package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_0;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_EXCLUDED;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_TRANSACTIONAL;
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
 * of reads, handler dispatches and returns, completions, sends, throttle expiries and (where
 * allowed) the client's disconnection. {@link Explorer} checks every reachable state.
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
                states += Explorer.explore(coarse(16, c(first, second)), MAX_STATES).states();
            }
        }
        reporter.publishEntry("states", Long.toString(states));
        assertTrue(states > 10_000, "explored " + states);
    }

    static Stream<Arguments> scenarios() {
        List<Arguments> list = new ArrayList<>();
        list.add(Arguments.of("drain: exclusive fetch behind two produces",
            fine(16, Long.MAX_VALUE, c(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH)))));
        list.add(Arguments.of("downgrade then upgrade again",
            fine(16, Long.MAX_VALUE, c(Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_EXCLUDED), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of("acks=0 between acknowledged produces",
            fine(16, Long.MAX_VALUE, c(pAll(), Req.of(PRODUCE_ACKS_0), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of("throttle starts while the drain is pending",
            fine(16, Long.MAX_VALUE, c(pAll().throttle(), Req.of(FETCH), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of("two overlapping throttle windows and a drain",
            coarse(16, c(pAll().throttle(), Req.of(PRODUCE_ACKS_1).throttle(), Req.of(FETCH).later()))));
        list.add(Arguments.of("acks=0 produce error closes the connection mid-pipeline",
            fine(16, Long.MAX_VALUE, c(pAll(), Req.of(PRODUCE_ACKS_0).closing(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of("in-flight limit 2, four acks=all produces",
            coarse(2, c(pAll(), pAll(), pAll(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of("byte limit below one request",
            fine(16, 1, c(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_ACKS_0)))));
        list.add(Arguments.of("metadata, produce, metadata, produce",
            coarse(16, c(Req.of(METADATA), Req.of(PRODUCE_ACKS_1), Req.of(METADATA).throttle(), pAll()))));
        list.add(Arguments.of("disconnect at any point: parked responses and a held fetch",
            coarse(16, disconnecting(pAll(), Req.of(PRODUCE_ACKS_1), Req.of(FETCH), Req.of(PRODUCE_ACKS_0)))));
        list.add(Arguments.of("disconnect at any point: throttled pipeline",
            coarse(16, disconnecting(pAll().throttle(), Req.of(PRODUCE_ACKS_0), Req.of(FETCH)))));
        list.add(Arguments.of("two connections, one processor",
            coarse(16, c(Req.of(PRODUCE_ACKS_1), Req.of(FETCH)), c(pAll().throttle()))));
        list.add(Arguments.of("two connections on two processors, one disconnects",
            new Scenario(2, 2, 16, Long.MAX_VALUE, false,
                List.of(disconnecting(pAll(), Req.of(FETCH)), c(Req.of(PRODUCE_ACKS_0))), 5)));
        return list.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyInterleaving(String name, Scenario scenario, TestReporter reporter) {
        Explorer.Result result = Explorer.explore(scenario, MAX_STATES);
        reporter.publishEntry(name, result.toString());
        assertTrue(result.quiescent() > 0);
    }
}
