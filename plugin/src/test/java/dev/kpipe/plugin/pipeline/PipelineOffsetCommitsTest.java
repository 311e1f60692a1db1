// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.VERIFIED;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.OFFSET_COMMIT;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_TXN_VERIFIED;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.TXN_OFFSET_COMMIT_VERIFIED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.classify.PipelinedApi;
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
 * Pipelined offset commits on the fake broker: an OFFSET_COMMIT's order-defining step happens inside
 * {@code KafkaApis.handle} (the classic coordinator's append, or the enqueue into KIP-848's coordinator runtime); a
 * TXN_OFFSET_COMMIT's, on the coordinator runtime, happens after handle returned, when the transaction coordinator
 * answered its verification (KIP-890) and the verification callback enqueued the write on the coordinator's thread.
 * The fake fails a run that dispatches a request before an earlier deferred write of its connection, or that has two
 * verifications of one connection outstanding; every interleaving is explored.
 */
class PipelineOffsetCommitsTest {

    private static final long MAX_STATES = 400_000;

    /** An offset commit whose response waits for the offsets topic's acks (offsets.commit.required.acks=-1). */
    private static Req oc() {
        return Req.of(OFFSET_COMMIT).later();
    }

    private static Req otv() {
        return Req.of(TXN_OFFSET_COMMIT_VERIFIED).later();
    }

    private static Client c(Req... requests) {
        return Scenario.client(requests);
    }

    private static Scenario txn(Client... clients) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, false, List.of(clients), 13).withTransactions();
    }

    @Test
    void offsetCommitsUpgradeAndPipelineBehindEachOtherWithResponsesInOrder() {
        Run run = new Run(Scenario.single(c(oc(), oc(), oc(), Req.of(METADATA))));
        run.except(COMPLETE);
        ConnectionPipeline cp = run.kpipe(0);
        assertNotNull(cp, "an offset commit upgrades the connection");
        assertEquals(4, cp.inflight().size(), "every commit read while the first waits for its acks");
        assertEquals(3, run.stats().maxInflightPerConnection(PipelinedApi.OFFSET_COMMIT));
        assertEquals(3, run.stats().pipelinedRequests(PipelinedApi.OFFSET_COMMIT));
        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void aVerifiedTxnOffsetCommitKeepsItsConnectionMutedUntilTheCoordinatorEnqueuedItsWrite() {
        Run run = new Run(Scenario.single(c(otv(), Req.of(PRODUCE_ACKS_1))).withTransactions());
        run.except(VERIFIED, COMPLETE);
        ConnectionPipeline cp = run.kpipe(0);
        assertNotNull(cp, "a transactional offset commit upgrades the connection");
        assertTrue(run.request(0, 0).returned, "handle returned");
        assertFalse(run.request(0, 0).appended, "the write waits for the transaction coordinator");
        assertFalse(run.request(0, 1).read, "the next request is not read before the write is enqueued");
        assertEquals(1, run.stats().deferredDispatches());

        run.except(COMPLETE); // the coordinator answers: the callback enqueues the write, the pipeline goes on
        assertTrue(run.request(0, 1).handled, "the produce was dispatched after the offsets' write");
        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    /** Without the binding's hooks for TXN_OFFSET_COMMIT the commit drains the pipeline first, as stock would. */
    @Test
    void withoutDeferredDispatchATxnOffsetCommitIsExclusive() {
        Run run = new Run(Scenario.single(c(Req.of(PRODUCE_ACKS_1).later(), otv(), Req.of(PRODUCE_ACKS_1))));
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(1, run.stats().drains(), "the transactional offset commit drained the pipeline");
        run.finish();
    }

    /**
     * The mutation the model exists for: a binding that signalled a TXN_OFFSET_COMMIT's dispatch at handle-return,
     * before the coordinator enqueued its write, lets the next request of the connection be dispatched first. The
     * fake fails that run.
     */
    @Test
    void dispatchAtHandleReturnWhereTheWriteComesLaterFails() {
        Run run = new Run(
                Scenario.single(c(otv(), Req.of(PRODUCE_ACKS_1).later())).withTransactions());
        run.broker.dispatchAtHandleReturn = true;
        // handle returns before the transaction coordinator answers: the mutant unmutes the connection, the produce
        // behind the commit is read and handled before the commit's write
        AssertionError e = assertThrows(AssertionError.class, () -> run.except(VERIFIED, COMPLETE));
        assertTrue(e.getMessage().contains("dispatched before the append of"), e.getMessage());
    }

    static Stream<Arguments> scenarios() {
        List<Arguments> list = new ArrayList<>();
        list.add(Arguments.of("three offset commits, acks later, then metadata", txn(c(oc(), oc(), oc()))));
        list.add(Arguments.of(
                "verified transactional offset commit between verified produces (an exactly-once producer)",
                txn(c(Req.of(PRODUCE_TXN_VERIFIED).later(), otv(), Req.of(PRODUCE_ACKS_1)))));
        list.add(Arguments.of("two verified offset commits in a row", txn(c(otv(), otv()))));
        list.add(Arguments.of(
                "an offset commit, then an exclusive request drains behind it", txn(c(oc(), Req.of(FETCH), oc()))));
        list.add(Arguments.of(
                "disconnect at any point around a deferred offsets write",
                txn(new Client(List.of(oc(), otv(), Req.of(PRODUCE_ACKS_1)), Integer.MAX_VALUE, true))));
        list.add(Arguments.of(
                "kpipe.enable turned off and on around offset commits",
                txn(c(oc(), otv())).withEnableFlips(2)));
        return list.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyInterleaving(String name, Scenario scenario, TestReporter reporter) {
        Explorer.Result result = Explorer.explore(scenario, MAX_STATES);
        reporter.publishEntry(name, result.toString());
        assertTrue(result.quiescent() > 0);
    }

    /** Both orders of handle-return and the coordinator's enqueue are reached. */
    @Test
    void bothOrdersOfHandleReturnAndTheEnqueueAreExplored() {
        Explorer.Result result = Explorer.explore(txn(c(otv(), otv())), MAX_STATES);
        assertTrue(
                result.covered()
                        .containsAll(Set.of(
                                "dispatch deferred",
                                "write enqueued after handle returned",
                                "appended before handle returned")),
                () -> "covered: " + result.covered());
    }
}
