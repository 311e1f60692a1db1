// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.ADMIT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.DISCONNECT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.HANDLE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.NET;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.PRESSURE;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.RETURN;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.TIMEOUT;
import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.WRITE;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.METADATA;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_1;
import static dev.kpipe.plugin.pipeline.Scenario.Kind.PRODUCE_ACKS_ALL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.FakeBroker.Step;
import dev.kpipe.plugin.pipeline.Scenario.BackPressure;
import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Example scenarios of the broker-wide byte budget and the storage-side pressure on the {@link FakeBroker}; every
 * step is also checked against its invariants (the budget's accounting, FIFO grants, no unmute while saturated).
 */
class PipelineBudgetScenariosTest {

    private static Req p1(int size) {
        return Req.of(PRODUCE_ACKS_1).sized(size);
    }

    private static Req pAll(int size) {
        return Req.of(PRODUCE_ACKS_ALL).later().sized(size);
    }

    private static Client client(Req... requests) {
        return Scenario.client(requests);
    }

    private static Client disconnecting(Req... requests) {
        return new Client(List.of(requests), Integer.MAX_VALUE, true);
    }

    private static Scenario budgeted(BackPressure bp, Client... clients) {
        return new Scenario(1, 4, 16, Long.MAX_VALUE, false, List.of(clients), 11).with(bp);
    }

    /** The handler thread running the first request of client c that is being handled. */
    private static int handlerOf(Run run, int c) {
        FakeBroker.Request[] handlers = run.broker.handlers;
        for (int h = 0; h < handlers.length; h++) {
            if (handlers[h] != null && handlers[h].conn.index == c) {
                return h;
            }
        }
        throw new AssertionError("no handler runs a request of client " + c);
    }

    /** The index, among the pending completions, of client c's delayed response. */
    private static int completionOf(Run run, int c) {
        for (int k = 0; k < run.broker.completions.size(); k++) {
            if (run.broker.completions.get(k).conn.index == c) {
                return k;
            }
        }
        throw new AssertionError("no delayed response of client " + c);
    }

    @Test
    void requestLargerThanTheWholeBudgetIsAdmittedAloneAndCompletes() {
        // tolerant(): at the end both idle connections want a reservation for a next request that never comes and
        // only one fits (in a broker, idle reservations are revoked after 20 ms and they take turns).
        Run run = new Run(budgeted(BackPressure.budget(100).tolerant(), client(p1(150), p1(150)), client(pAll(40))));
        run.step(WRITE, 0).step(WRITE, 1).only(NET);
        // Client 0's first 150 found the budget empty: it upgraded the connection, admitted alone (saturated).
        // Client 1's 40, read meanwhile, found no room: it stayed classic (Kafka's one-at-a-time bound applies);
        // when its response is written kpipe takes the connection over and it waits for budget in line.
        assertEquals(1, run.broker.budget.oversizeAdmitted());
        assertEquals(150, run.broker.budget.used());
        assertNull(run.kpipe(1), "no upgrade without budget room");
        assertEquals(1, run.stats().upgradesDeferred());

        run.settle();
        assertTrue(run.kpipe(1) != null, "taken over once its classic response was written");
        // The next 150: its estimate (150) is clamped to the budget and waits for it to be empty, then is admitted
        // alone again; it never waits forever.
        assertEquals(2, run.broker.budget.oversizeAdmitted(), "two oversize requests read, each alone");
        assertEquals(150, run.broker.budget.peak(), "never more than the oversize request alone");
        run.assertReceivedInOrder(0);
        run.assertReceivedInOrder(1);
        run.finish();
    }

    @Test
    void aConnectionWhoseUpgradeFoundNoRoomIsTakenOverWhenItsResponseIsWrittenAndWaitsInLine() {
        Run run =
                new Run(budgeted(BackPressure.budget(100), client(pAll(60), p1(60)), client(pAll(60), p1(60), p1(60))));
        run.step(WRITE, 0).step(WRITE, 1).only(NET);
        assertEquals(60, run.broker.budget.used(), "client 0's first request upgraded its connection");
        assertNull(run.kpipe(1), "client 1's found no room: classic");
        assertEquals(1, run.stats().upgradesDeferred());

        run.except(COMPLETE);
        assertNull(run.kpipe(1), "still classic until its response is written");
        run.step(COMPLETE, completionOf(run, 1)).except(COMPLETE);
        // Its response is written; kpipe took the connection over (muted) and it asked for 60 like any other.
        assertTrue(run.kpipe(1) != null);
        assertEquals(60, Internals.largestRequest(run.kpipe(1)), "its estimate is the request that could not upgrade");
        assertEquals(2, run.stats().upgrades());

        // Idle reservations are revoked for waiters (each processor round takes the idle threshold, 20 ms, of
        // simulated time here), so the two take turns until both are answered.
        run.broker.nanosPerRound = PipelineCoordinator.IDLE_RESERVATION_NANOS;
        run.progressUntilAnswered(1).progressUntilAnswered(0);
        run.assertReceivedInOrder(0);
        run.assertReceivedInOrder(1);
        assertTrue(run.broker.budget.peak() <= 100 + 60, "no more than the budget + one request");
        run.finish();
    }

    @Test
    void connectionsWaitingForBudgetAreAdmittedAndUnmutedInTheOrderTheyStartedWaiting() {
        Run run = new Run(budgeted(
                BackPressure.budget(100),
                client(pAll(30), p1(30)),
                client(pAll(30), p1(30)),
                client(pAll(30), p1(30))));
        run.except(RETURN, COMPLETE);
        assertEquals(90, run.broker.budget.used(), "three first requests: each upgrade found room");
        // Each wants 30 more for its next request (90 + 30 > 100): they start waiting in the order their handlers
        // return: 2, 0, 1.
        for (int c : new int[] {2, 0, 1}) {
            run.step(RETURN, handlerOf(run, c)).only(NET);
            assertTrue(Internals.reservation(run.kpipe(c)).waiting());
        }
        assertEquals(3, run.broker.budget.waiting());
        assertTrue(run.broker.unmuteLog.isEmpty());

        // Any response frees room for exactly one waiter: the head.
        run.step(COMPLETE, completionOf(run, 1)).except(COMPLETE);
        assertEquals(List.of(2), run.broker.grantLog);
        run.step(COMPLETE, completionOf(run, 0))
                .step(COMPLETE, completionOf(run, 2))
                .except();

        assertEquals(List.of(2, 0, 1), run.broker.grantLog.subList(0, 3), "granted in FIFO order");
        assertEquals(List.of(2, 0, 1), run.broker.unmuteLog.subList(0, 3), "unmuted in FIFO order");
        for (int c = 0; c < 3; c++) {
            run.assertReceivedInOrder(c);
        }
        run.finish();
    }

    @Test
    void closeWhileWaitingForBudgetReleasesItsBytesOnceAndAdmitsTheNextWaiter() {
        Run run =
                new Run(budgeted(BackPressure.budget(100), disconnecting(pAll(40), p1(40)), client(pAll(40), p1(10))));
        run.except(COMPLETE);
        assertTrue(Internals.reservation(run.kpipe(0)).waiting());
        assertTrue(Internals.reservation(run.kpipe(1)).waiting());
        assertEquals(80, run.broker.budget.used());

        ConnectionPipeline closed = run.kpipe(0);
        run.step(DISCONNECT, 0).except(COMPLETE);
        assertNull(run.kpipe(0));
        assertEquals(0, Internals.reservation(closed).reserved());
        assertFalse(Internals.reservation(closed).waiting());
        // Its 40 in-flight bytes went back once; client 1 was admitted (40) and read its 10, whose response waits
        // behind the first one's.
        assertEquals(List.of(1), run.broker.grantLog);
        assertEquals(0, run.broker.budget.waiting());

        run.settle();
        run.assertReceivedInOrder(1);
        assertEquals(40, run.broker.budget.used(), "client 1's reservation for its next request");
        run.finish();
    }

    @Test
    void closeAfterTheBudgetAdmittedTheConnectionButBeforeItsCallbackRanReleasesTheGrantOnce() {
        Run run = new Run(
                budgeted(BackPressure.budget(100).delayed(), disconnecting(pAll(40), p1(10)), client(pAll(50))));
        run.except(RETURN, COMPLETE, ADMIT);
        run.step(RETURN, handlerOf(run, 0))
                .only(NET)
                .step(RETURN, handlerOf(run, 1))
                .only(NET);
        assertEquals(90, run.broker.budget.used());
        assertEquals(2, run.broker.budget.waiting());

        // Client 1's response releases 50: the budget admits client 0 (40) on this thread; the admitted() callback,
        // which would hand the news to client 0's network thread, has not run yet.
        run.step(COMPLETE, completionOf(run, 1)).except(COMPLETE, ADMIT);
        ConnectionPipeline granted = run.kpipe(0);
        assertEquals(List.of(granted), run.broker.pendingAdmissions);
        assertTrue(Internals.reservation(granted).waiting());
        assertEquals(0, Internals.reservation(granted).grants());
        assertEquals(40 + 40, run.broker.budget.used());

        run.step(DISCONNECT, 0).only(NET);
        // The close found the grant already made (cancel failed): it released the reservation and counted the grant
        // as consumed before the callback counted it.
        assertNull(run.kpipe(0));
        assertEquals(1, Internals.reservation(granted).grantsConsumed());
        assertEquals(50, run.broker.budget.used(), "only client 1's reservation, admitted on the release");

        run.step(ADMIT, 0).only(NET);
        assertEquals(
                Internals.reservation(granted).grantsConsumed(),
                Internals.reservation(granted).grants(),
                "the late callback balances the grant");
        assertEquals(ConnectionState.CLOSED, granted.state());
        run.settle();
        run.finish();
    }

    @Test
    void whileStoragePressureIsSaturatedNoPipelinedConnectionIsUnmutedButClassicOnesProceed() {
        Run run = new Run(budgeted(
                BackPressure.budget(100).pressure(1),
                client(p1(10), p1(10)),
                client(Req.of(METADATA), Req.of(METADATA))));
        run.step(PRESSURE, 1).except(PRESSURE, TIMEOUT);
        // The first produce was read while Kafka owned the connection; after its dispatch kpipe keeps it muted.
        assertTrue(run.kpipe(0).pressureBlocked());
        assertTrue(run.conn(0).channel.isMuted());
        assertEquals(1, run.conn(0).inbound.size());
        assertEquals(2, run.conn(1).received.size(), "the classic connection is not held back");
        assertTrue(run.broker.unmuteLog.isEmpty());

        run.step(PRESSURE, 0);
        // Nothing wakes the processor; its poll times out (300 ms) and the round re-evaluates the connection.
        assertEquals(List.of(new Step(TIMEOUT, 0)), run.broker.enabled(false));
        run.step(TIMEOUT, 0).settle();
        assertFalse(run.kpipe(0).pressureBlocked());
        run.assertReceivedInOrder(0);
        run.finish();
    }

    /**
     * The bound on admitted bytes. An upgrade charges the request already read only if the budget has room for it
     * (else it stays classic), so upgrades never overshoot. What can overshoot is a request larger than its
     * connection's reservation (the estimate is the connection's largest request so far): the capacity is exceeded
     * by what requests grow by, and several connections can grow at once, so "capacity plus one request" holds for
     * steady request sizes but not in general; capacity plus, per connection, its largest request always holds
     * (checked on every step by {@link FakeBroker#checkInvariants()}).
     */
    @Test
    void upgradesNeverOvershootButConnectionsWhoseRequestsGrowAtOnceCan() {
        Run run = new Run(budgeted(BackPressure.budget(10).tolerant(), client(p1(5), p1(8)), client(p1(8))));
        run.step(WRITE, 0).only(NET);
        assertEquals(5, run.broker.budget.used(), "client 0's first request upgraded its connection");
        run.step(WRITE, 0).step(WRITE, 1).step(HANDLE, 0).step(RETURN, 0).only(NET);
        // Client 0 reserved its estimate, 5 (used 10: saturated), then read 8; client 1's first produce found the
        // budget saturated and stayed classic.
        assertEquals(5 + 8, run.broker.budget.peak());
        assertNull(run.kpipe(1));
        run.settle();
        run.finish();

        // tolerant(): at the end the idle connections each want 8 for a next request that never comes; only one fits
        // (in a broker, idle reservations are revoked after 20 ms and they take turns).
        Run growing = new Run(budgeted(
                BackPressure.budget(10).tolerant(), client(p1(2), p1(8)), client(p1(2), p1(8)), client(p1(2), p1(8))));
        growing.settle();
        assertTrue(
                growing.broker.budget.peak() > 10 + 8,
                "three connections reserved 2 each and read 8 at once: " + growing.broker.budget.peak());
        assertTrue(growing.broker.budget.peak() <= 10 + 3 * 8, "capacity + each connection's largest request holds");
        for (int c = 0; c < 3; c++) {
            growing.assertReceivedInOrder(c);
        }
        growing.finish();
    }

    /**
     * A connection kpipe unmuted holds the reservation for its next request while it is idle. While another
     * connection waits for the budget, an idle reservation is given back (the idle connection is muted and waits in
     * line again) so the waiter is not starved. Client 0 is idle holding 6 of 10; client 1 (upgraded by a 1-byte
     * request) wants 6 for its third request: 6 + 6 &gt; 10. (Each processor round takes the coordinator's idle
     * threshold, 20 ms, of simulated time.)
     */
    @Test
    void idleConnectionsReservationIsRevokedForAWaiter() {
        Run run = new Run(budgeted(BackPressure.budget(10), client(p1(6)), client(p1(1), p1(6), p1(6))));
        run.broker.nanosPerRound = PipelineCoordinator.IDLE_RESERVATION_NANOS;
        run.step(WRITE, 0).except(WRITE);
        assertEquals(
                6, Internals.reservation(run.kpipe(0)).reserved(), "client 0 is idle, unmuted, holding its estimate");
        run.step(WRITE, 1).step(WRITE, 1).step(WRITE, 1).progressUntilAnswered(1);
        run.assertReceivedInOrder(1);
        assertTrue(run.stats().reservationsRevoked() > 0);
        run.finish();
    }

    /**
     * The same for a request larger than the budget: its clamped reservation needs the budget to be empty, which
     * an idle connection's reservation (3 bytes here) would prevent forever if it were not revoked.
     */
    @Test
    void oversizeRequestIsAdmittedOnceAnIdleConnectionsReservationIsRevoked() {
        Run run = new Run(budgeted(BackPressure.budget(10), client(p1(3)), client(p1(1), p1(12), p1(12))));
        run.broker.nanosPerRound = PipelineCoordinator.IDLE_RESERVATION_NANOS;
        run.step(WRITE, 0).except(WRITE);
        run.step(WRITE, 1).step(WRITE, 1).step(WRITE, 1).progressUntilAnswered(1);
        run.assertReceivedInOrder(1);
        assertTrue(run.stats().reservationsRevoked() > 0);
        run.finish();
    }
}
