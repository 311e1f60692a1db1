// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.SEND_DONE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bound on read-ahead of a client that does not read its responses ({@link WaitReason#UNDRAINED}) on the
 * {@link FakeBroker}: once a response's write is incomplete while another is held behind it, the connection is read no
 * further until the write completes, whatever its in-flight limit.
 */
class PipelineUndrainedTest {

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    /** One client of {@code n} acks=all produce requests, limit 16 (far above what is read here). */
    private static Run run(int n) {
        Req[] requests = new Req[n];
        for (int i = 0; i < n; i++) {
            requests[i] = pAll();
        }
        return new Run(new Scenario(1, 4, 16, Long.MAX_VALUE, false, List.of(Scenario.client(requests)), 17));
    }

    @Test
    void aConnectionWhoseWriteIsIncompleteWithAResponseHeldBehindItIsReadNoFurther() {
        Run run = run(8);
        // Three requests written and read; nothing answered yet.
        run.step(WRITE, 0).step(WRITE, 0).step(WRITE, 0).except(WRITE, COMPLETE, SEND_DONE);
        ConnectionPipeline<?, ?> conn = run.kpipe(0);
        assertEquals(3, conn.inflight().size());
        // The first two answered: the first's write never completes (the client does not read), the second is held.
        run.step(COMPLETE, 0).step(COMPLETE, 0).except(WRITE, COMPLETE, SEND_DONE);
        assertTrue(conn.inflight().sendOutstanding());
        assertEquals(1, conn.inflight().heldResponses());
        assertTrue(conn.inflight().undrained());
        assertEquals(1, run.stats().waits(WaitReason.UNDRAINED));

        // The client writes its five other requests: kpipe reads none of them while the write stays incomplete.
        run.except(COMPLETE, SEND_DONE);
        assertEquals(3, conn.inflight().size(), "requests read: none after the connection became undrained");
        assertEquals(1, conn.inflight().heldResponses(), "responses held");
        assertTrue(conn.muted());
        assertTrue(ConnectionSnapshot.of(conn, new dev.kpipe.backpressure.InflightLimits(16, Long.MAX_VALUE), 0L)
                .waitReasons()
                .contains(WaitReason.UNDRAINED));

        // The write completes: the held response becomes the outstanding send, nothing held behind it: read again.
        run.step(SEND_DONE, 0).except(COMPLETE, SEND_DONE);
        assertFalse(conn.inflight().undrained());
        assertEquals(1, run.stats().waits(WaitReason.UNDRAINED), "one wait, counted when it started");
        assertTrue(
                conn.inflight().size() > 2,
                "read again once drained: " + conn.inflight().size());

        run.settle();
        run.assertReceivedInOrder(0);
        run.finish();
    }

    @Test
    void aClientThatReadsItsResponsesIsReadAgainAfterEachWrite() {
        Run run = run(8);
        run.settle();
        run.assertReceivedInOrder(0);
        assertFalse(run.kpipe(0).inflight().undrained());
        assertEquals(0, run.kpipe(0).inflight().size());
        run.finish();
    }
}
