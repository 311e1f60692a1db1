// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.DISCONNECT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.END_THROTTLE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link PipelineStats#throttleTimeNanos()} (metric {@code throttle-time-ms-total}): per pipelined
 * connection, the time from a throttle window opening while none was open to the last open window
 * closing; overlapping windows count once; a connection closed while throttled counts until its
 * close. On the fake broker's simulated clock, which the test moves between steps.
 */
class ThrottleTimeTest {

    private static final long PAUSE_MS = 40;

    @Test
    void overlappingWindowsCountOnceFromTheFirstOpenToTheLastClose() throws Exception {
        Run run = new Run(Scenario.single(Scenario.client(
                Req.of(PRODUCE_ACKS_ALL).later().throttle(),
                Req.of(PRODUCE_ACKS_ALL).later().throttle(),
                Req.of(PRODUCE_ACKS_1))));
        run.except(COMPLETE, END_THROTTLE);
        assertEquals(3, run.kpipe(0).inflight().size(), "all read before any throttled produce completes");

        long t0 = run.broker.nanos();
        run.step(COMPLETE, 0).except(COMPLETE, END_THROTTLE);
        assertEquals(1, run.kpipe(0).throttleWindows());
        assertEquals(0, run.stats().throttleTimeNanos(), "nothing counted while the window is open");
        run.broker.advance(TimeUnit.MILLISECONDS.toNanos(PAUSE_MS));
        run.step(COMPLETE, 0).except(COMPLETE, END_THROTTLE);
        assertEquals(2, run.kpipe(0).throttleWindows(), "two windows overlap");
        run.broker.advance(TimeUnit.MILLISECONDS.toNanos(PAUSE_MS));
        run.step(END_THROTTLE, 0).except(END_THROTTLE);
        assertEquals(0, run.stats().throttleTimeNanos(), "a window is still open");
        assertEquals(1, run.stats().throttledConnections());
        run.broker.advance(TimeUnit.MILLISECONDS.toNanos(PAUSE_MS));
        run.step(END_THROTTLE, 0).except(END_THROTTLE); // the network thread processes the EndThrottling
        long elapsed = run.broker.nanos() - t0;

        long counted = run.stats().throttleTimeNanos();
        assertTrue(
                counted >= TimeUnit.MILLISECONDS.toNanos(3 * PAUSE_MS), "first open to last close, " + counted + " ns");
        assertTrue(counted <= elapsed, "overlap counted once: " + counted + " ns of " + elapsed + " ns");
        assertEquals(0, run.stats().throttledConnections());
        assertEquals(2, run.stats().throttleWindows());

        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(counted, run.stats().throttleTimeNanos(), "nothing more once no window is open");
        run.finish();
    }

    @Test
    void closeWhileThrottledCountsUntilTheClose() throws Exception {
        Run run = new Run(Scenario.single(new Client(
                List.of(Req.of(PRODUCE_ACKS_1).throttle(), Req.of(PRODUCE_ACKS_1)), Integer.MAX_VALUE, true)));
        long t0 = run.broker.nanos();
        run.except(END_THROTTLE, DISCONNECT);
        assertEquals(1, run.stats().throttledConnections());
        run.broker.advance(TimeUnit.MILLISECONDS.toNanos(PAUSE_MS));
        run.step(DISCONNECT, 0).except(END_THROTTLE);
        long elapsed = run.broker.nanos() - t0;
        long counted = run.stats().throttleTimeNanos();
        assertTrue(
                counted >= TimeUnit.MILLISECONDS.toNanos(PAUSE_MS) && counted <= elapsed,
                counted + " ns counted, " + elapsed + " ns elapsed");
        run.settle();
        assertEquals(
                counted, run.stats().throttleTimeNanos(), "a late EndThrottling of a closed connection adds nothing");
        run.finish();
    }
}
