// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.CONFIG;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.END_THROTTLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.NET;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.PRESSURE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.RETURN;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.TIMEOUT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.BAD;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.FETCH;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.SASL_REAUTH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.Scenario.BackPressure;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The per-reason counts of waits ({@link PipelineStats#waits}, the {@code wait-<reason>-total} metrics) on the
 * {@link FakeBroker}: each wait is counted once, when a connection starts waiting for its reason, not once per
 * evaluation. Besides these examples, the fake checks on every step of every explored run that the waits for dispatch
 * equal the pipelined requests and the waits for the budget equal the budget's queue entries.
 */
class PipelineWaitCountsTest {

    private static Req pAll() {
        return Req.of(PRODUCE_ACKS_ALL).later();
    }

    private static Req p1() {
        return Req.of(PRODUCE_ACKS_1);
    }

    private static Scenario one(Req... requests) {
        return Scenario.single(Scenario.client(requests));
    }

    /** @return the reasons counted so far, with their counts; the reasons never waited for are left out */
    private static Map<WaitReason, Long> waits(Run run) {
        Map<WaitReason, Long> out = new EnumMap<>(WaitReason.class);
        for (WaitReason r : WaitReason.values()) {
            long n = run.stats().waits(r);
            if (n != 0) {
                out.put(r, n);
            }
        }
        return out;
    }

    @Test
    void everyPipelinedRequestWaitsForItsDispatchOnceWithoutLimits() {
        Run run = new Run(one(pAll(), p1(), p1()));
        run.settle();
        run.assertReceivedInOrder(0);
        // The fair run answers the second and third while the first's write is incomplete: undrained once.
        assertEquals(Map.of(WaitReason.AWAITING_DISPATCH, 3L, WaitReason.UNDRAINED, 1L), waits(run));
        run.finish();
    }

    @Test
    void aWaitForTheInflightLimitIsCountedWhenTheLimitStartsToHoldNotAtEachEvaluation() {
        // Limit 2: the second request read reaches it; the completion of the first frees it, the third reaches it
        // again.
        Run run = new Run(new Scenario(
                1, 4, 2, Long.MAX_VALUE, false, List.of(Scenario.client(pAll(), pAll(), pAll(), pAll())), 7));
        run.except(COMPLETE);
        assertEquals(2, run.kpipe(0).inflight().size());
        assertEquals(1, run.stats().waits(WaitReason.INFLIGHT_LIMIT), "at the limit since the second request");

        run.step(COMPLETE, 1).except(COMPLETE);
        assertEquals(2, run.kpipe(0).inflight().size(), "the second's response frees nothing before the first's");
        assertEquals(1, run.stats().waits(WaitReason.INFLIGHT_LIMIT), "evaluated again, still the same wait");

        run.step(COMPLETE, 0).except(COMPLETE);
        assertEquals(2, run.kpipe(0).inflight().size(), "both answered, two more read");
        assertEquals(2, run.stats().waits(WaitReason.INFLIGHT_LIMIT), "a new wait");
        run.settle();
        run.assertReceivedInOrder(0);
        assertEquals(
                Map.of(WaitReason.AWAITING_DISPATCH, 4L, WaitReason.INFLIGHT_LIMIT, 2L, WaitReason.UNDRAINED, 1L),
                waits(run));
        run.finish();
    }

    @Test
    void connectionsThatWaitInLineForTheBudgetAreCountedOnceEach() {
        Run run = new Run(new Scenario(
                        1,
                        4,
                        16,
                        Long.MAX_VALUE,
                        false,
                        List.of(
                                Scenario.client(pAll().sized(30), p1().sized(30)),
                                Scenario.client(pAll().sized(30), p1().sized(30)),
                                Scenario.client(pAll().sized(30), p1().sized(30))),
                        11)
                .with(BackPressure.budget(100)));
        run.except(RETURN, COMPLETE);
        assertEquals(90, run.broker.budget.used(), "three first requests: each upgrade found room");
        for (int h = 0; h < 3; h++) {
            run.step(RETURN, h).only(NET);
        }
        assertEquals(3, run.broker.budget.waiting(), "each wants 30 more: 90 + 30 > 100");
        assertEquals(3, run.stats().waits(WaitReason.BUDGET));
        run.settle();
        for (int c = 0; c < 3; c++) {
            run.assertReceivedInOrder(c);
        }
        assertEquals(run.broker.budget.waitsStarted(), run.stats().waits(WaitReason.BUDGET));
        assertEquals(6, run.stats().waits(WaitReason.AWAITING_DISPATCH));
        run.finish();
    }

    @Test
    void storagePressureIsCountedOnceWhileItLastsWhateverWakesTheConnection() {
        Run run = new Run(new Scenario(
                        1,
                        4,
                        16,
                        Long.MAX_VALUE,
                        false,
                        List.of(Scenario.client(pAll().sized(10), p1().sized(10), p1().sized(10))),
                        11)
                .with(BackPressure.budget(100).pressure(1)));
        run.step(WRITE, 0).step(WRITE, 0).only(NET);
        run.step(PRESSURE, 1).except(PRESSURE, TIMEOUT);
        assertTrue(run.kpipe(0).pressureBlocked());
        assertEquals(1, run.stats().waits(WaitReason.STORAGE_PRESSURE));
        assertTrue(run.broker.completions.isEmpty(), "the delayed response completed while saturated");
        assertEquals(1, run.stats().waits(WaitReason.STORAGE_PRESSURE), "its completion evaluated it: the same wait");

        run.step(PRESSURE, 0).step(TIMEOUT, 0).settle();
        run.assertReceivedInOrder(0);
        assertEquals(1, run.stats().waits(WaitReason.STORAGE_PRESSURE));
        run.finish();
    }

    @Test
    void overlappingThrottleWindowsAreOneWait() {
        Run run = new Run(one(pAll().throttle(), pAll().throttle(), p1()));
        run.except(COMPLETE, END_THROTTLE).except(END_THROTTLE);
        assertEquals(2, run.kpipe(0).throttleWindows(), "both responses written, both windows open");
        assertEquals(1, run.stats().waits(WaitReason.THROTTLED));
        run.step(END_THROTTLE, 0).except(END_THROTTLE).step(END_THROTTLE, 0).settle();
        run.assertReceivedInOrder(0);
        assertEquals(1, run.stats().waits(WaitReason.THROTTLED), "the second window opened while the first was open");
        run.finish();
    }

    @Test
    void eachDrainIsAWaitOfItsKind() {
        Run exclusive = new Run(one(pAll(), Req.of(FETCH), p1()));
        exclusive.settle();
        exclusive.assertReceivedInOrder(0);
        assertEquals(
                Map.of(WaitReason.AWAITING_DISPATCH, 2L, WaitReason.DRAIN_EXCLUSIVE, 1L),
                waits(exclusive),
                "the fetch drained the connection; the produce after the downgrade upgraded it again");
        exclusive.finish();

        Run reauthentication = new Run(one(pAll(), Req.of(SASL_REAUTH), p1()));
        reauthentication.settle();
        reauthentication.assertReceivedInOrder(0);
        assertEquals(
                Map.of(WaitReason.AWAITING_DISPATCH, 2L, WaitReason.DRAIN_REAUTHENTICATION, 1L),
                waits(reauthentication));
        reauthentication.finish();

        Run rejected = new Run(one(pAll(), Req.of(BAD)));
        rejected.settle();
        assertEquals(Map.of(WaitReason.AWAITING_DISPATCH, 1L, WaitReason.CLOSE_AFTER_DRAIN, 1L), waits(rejected));
        rejected.finish();

        Run disabled = new Run(one(pAll(), pAll()).withEnableFlips(1));
        disabled.step(WRITE, 0).step(WRITE, 0).except(WRITE, COMPLETE, CONFIG);
        disabled.step(CONFIG, 0).except(COMPLETE);
        assertTrue(disabled.kpipe(0).state().draining());
        disabled.settle();
        disabled.assertReceivedInOrder(0);
        assertEquals(Map.of(WaitReason.AWAITING_DISPATCH, 2L, WaitReason.DRAIN_DISABLED, 1L), waits(disabled));
        disabled.finish();
    }
}
