// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.CALLBACK;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.RETURN;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.VERIFIED;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_TRANSACTIONAL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_TXN_VERIFIED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pipelined transactional produce on the fake broker (KIP-890): a verified produce's {@code KafkaApis.handle} returns
 * before its append, which runs later in a {@code CallbackRequest}; kpipe reads the connection's next request only
 * once that append happened. The fake fails a run that dispatches a request before an earlier verified append of
 * its connection, or that has two verifications of one connection outstanding; every interleaving is explored.
 */
class PipelineTransactionsTest {

    private static final long MAX_STATES = 400_000;

    private static Req ptv() {
        return Req.of(PRODUCE_TXN_VERIFIED).later();
    }

    private static Req ptx() {
        return Req.of(PRODUCE_TRANSACTIONAL).later();
    }

    private static Scenario txn(Client... clients) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, false, List.of(clients), 11).withTransactions();
    }

    private static Client c(Req... requests) {
        return Scenario.client(requests);
    }

    @Test
    void aVerifiedProduceKeepsItsConnectionMutedUntilItsAppendThenThePipelineGoesOnInOrder() {
        Run run =
                new Run(Scenario.single(c(ptv(), ptx(), Req.of(PRODUCE_ACKS_1))).withTransactions());
        run.except(VERIFIED, CALLBACK, COMPLETE);
        ConnectionPipeline cp = run.kpipe(0);
        assertNotNull(cp, "a transactional produce upgrades the connection");
        assertTrue(run.request(0, 0).returned, "handle returned");
        assertFalse(run.request(0, 0).appended, "the append waits for the coordinator");
        assertFalse(run.request(0, 1).read, "the next request is not read before the append");
        assertEquals(1, run.stats().deferredDispatches());
        assertEquals(Set.of(WaitReason.AWAITING_APPEND), only(run).waitReasons());

        run.except(COMPLETE); // the coordinator answers, a handler appends; the rest is read and dispatched
        assertTrue(run.request(0, 2).returned, "the pipeline went on");
        assertEquals(3, cp.inflight().size(), "three in flight: the acks=all ones wait for acks");
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(3, run.stats().pipelinedRequests());
        assertEquals(1, run.stats().deferredDispatches(), "only the verified one waited");
        run.finish();
    }

    @Test
    void withoutDeferredDispatchTransactionalProduceIsExclusive() {
        Run run = new Run(Scenario.single(c(Req.of(PRODUCE_ACKS_1).later(), ptv(), Req.of(PRODUCE_ACKS_1))));
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(1, run.stats().drains(), "the transactional produce drained the pipeline");
        assertEquals(0, run.stats().deferredDispatches());
        run.finish();
    }

    /**
     * The callback appends and answers before {@code KafkaApis.handle} returned: the response, dequeued on the network
     * thread, ends the dispatch phase, so the next request is read before the handler's signal.
     */
    @Test
    void aVerifiedProduceAnsweredBeforeHandleReturnsLetsTheNextRequestBeRead() {
        Run run = new Run(Scenario.single(
                        c(Req.of(PRODUCE_TXN_VERIFIED), Req.of(PRODUCE_ACKS_1).later()))
                .withTransactions());
        run.except(RETURN, COMPLETE);
        assertFalse(run.request(0, 0).returned, "handle has not returned");
        assertTrue(run.request(0, 0).appended, "the callback appended");
        assertTrue(run.request(0, 1).read, "the next request was read on the response");
        assertTrue(run.request(0, 1).handled, "and dispatched after the append");
        assertEquals(0, run.stats().deferredDispatches(), "its handle had not returned: nothing was deferred");
        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    /** If the broker's hooks ever missed a callback's completion, the written response still ends the wait. */
    @Test
    void aMissedCallbackCompletionEndsWhenTheResponseIsWrittenNotNever() {
        Run run = new Run(Scenario.single(c(ptv(), Req.of(PRODUCE_ACKS_1), Req.of(PRODUCE_TXN_VERIFIED)))
                .withTransactions());
        run.broker.loseCallbackSignals = true;
        run.settle();
        run.assertReceivedInOrder(0);
        assertTrue(run.broker.coverage.containsKey("callback signal lost"), run.broker.coverage::toString);
        run.finish();
    }

    private static ConnectionSnapshot only(Run run) {
        List<ConnectionSnapshot> all = run.broker.coordinator.connectionSnapshots();
        assertEquals(1, all.size(), all::toString);
        return all.get(0);
    }

    static Stream<Arguments> scenarios() {
        List<Arguments> list = new ArrayList<>();
        list.add(Arguments.of(
                "two verified produces in a row, then acks=1", txn(c(ptv(), ptv(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of(
                "verified, answered during its callback, then metadata and a verified acks=all",
                txn(c(Req.of(PRODUCE_TXN_VERIFIED), Req.of(METADATA), ptv()))));
        list.add(Arguments.of(
                "an unverified transactional produce, a verified one, an idempotent one",
                txn(c(ptx(), ptv(), Req.of(PRODUCE_ACKS_ALL).later()))));
        list.add(Arguments.of(
                "a verified produce, then an exclusive request drains behind it", txn(c(ptv(), Req.of(FETCH), ptv()))));
        list.add(Arguments.of("a verified produce on a throttled connection", txn(c(ptv().throttle(), ptv()))));
        list.add(Arguments.of(
                "disconnect at any point around a deferred append",
                txn(new Client(List.of(ptv(), Req.of(PRODUCE_ACKS_1), ptv()), Integer.MAX_VALUE, true))));
        list.add(Arguments.of(
                "two connections verifying at once, one processor", txn(c(ptv(), Req.of(PRODUCE_ACKS_1)), c(ptv()))));
        list.add(Arguments.of(
                "kpipe.enable turned off and on around a deferred append",
                txn(c(ptv(), ptv())).withEnableFlips(2)));
        list.add(Arguments.of(
                "no deferred dispatch (binding without the hooks): exclusive, classic order",
                new Scenario(1, 2, 16, Long.MAX_VALUE, false, List.of(c(Req.of(PRODUCE_ACKS_1), ptv(), ptv())), 11)));
        return list.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyInterleaving(String name, Scenario scenario, TestReporter reporter) {
        Explorer.Result result = Explorer.explore(scenario, MAX_STATES);
        reporter.publishEntry(name, result.toString());
        assertTrue(result.quiescent() > 0);
    }

    /** Both orders of the two-party hand-off are reached: the callback before handle-return, and after it. */
    @Test
    void bothOrdersOfHandleReturnAndTheCallbackAreExplored() {
        Explorer.Result result = Explorer.explore(txn(c(ptv(), ptv())), MAX_STATES);
        assertTrue(
                result.covered()
                        .containsAll(Set.of(
                                "dispatch deferred",
                                "append after handle returned",
                                "appended before handle returned")),
                () -> "covered: " + result.covered());
    }
}
