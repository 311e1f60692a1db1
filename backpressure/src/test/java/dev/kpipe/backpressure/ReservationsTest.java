// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Reservations} against a real {@link ByteBudget}, with a simulated clock and connections. */
class ReservationsTest {

    /** A connection: counts its admissions and revocations, reads while {@code reading}. */
    private static final class Conn implements Reservation.Holder {
        final Reservation reservation;
        boolean owned = true;
        boolean reading = true;
        int admissions;
        int revocations;

        Conn(ReservationHolders holders) {
            reservation = new Reservation(this, holders);
        }

        @Override
        public void admitted() {
            reservation.granted();
            admissions++;
        }

        @Override
        public boolean owned() {
            return owned;
        }

        @Override
        public boolean reading() {
            return reading;
        }

        @Override
        public void revoke() {
            reading = false;
            revocations++;
        }
    }

    private long now;
    private final ByteBudget budget = new ByteBudget(100, 50, () -> now);
    private final LongAdder revoked = new LongAdder();
    private final LongAdder faults = new LongAdder();
    private final Reservations reservations = new Reservations(budget, () -> now, revoked, faults);
    private final ReservationHolders holders = new ReservationHolders();
    private Conn a;
    private Conn b;

    @BeforeEach
    void connections() {
        a = new Conn(holders);
        b = new Conn(holders);
    }

    private void assertInvariants(Conn... conns) {
        for (Conn c : conns) {
            assertNull(c.reservation.invariantViolation());
        }
    }

    @Test
    void aReservationIsListedWhileHeldAndSettledByTheRead() {
        assertTrue(reservations.reserve(a.reservation, 30, 1));
        assertEquals(30, a.reservation.reserved());
        assertEquals(1, holders.size());
        assertSame(a.reservation, holders.first());
        assertTrue(reservations.reserve(a.reservation, 99, 2), "held already: nothing more is reserved");
        assertEquals(30, budget.used());

        reservations.settle(a.reservation, 45, false);
        assertEquals(0, a.reservation.reserved());
        assertTrue(holders.isEmpty());
        assertEquals(45, budget.used(), "the actual size replaces the estimate");
        assertInvariants(a);
    }

    @Test
    void theRequestThatUpgradesIsChargedOnceAndItsSettleChargesNothingMore() {
        assertTrue(reservations.tryAdmitRead(40));
        reservations.settle(a.reservation, 40, true);
        assertEquals(40, budget.used());
        assertInvariants(a);
    }

    @Test
    void aWaiterUsesItsGrantOnceAndIsListedThen() {
        assertTrue(reservations.reserve(a.reservation, 100, 1));
        assertFalse(reservations.reserve(b.reservation, 30, 1));
        assertTrue(b.reservation.waiting());
        assertEquals(30, b.reservation.wanted());
        assertFalse(reservations.reserve(b.reservation, 30, 2), "no grant yet: still waiting");
        assertInvariants(a, b);

        reservations.release(a.reservation); // back to 0: b is admitted on this thread
        assertEquals(1, b.admissions);
        assertEquals(1, b.reservation.grants());
        assertTrue(b.reservation.waiting(), "until its network thread takes the grant");
        assertTrue(reservations.reserve(b.reservation, 30, 3));
        assertFalse(b.reservation.waiting());
        assertEquals(30, b.reservation.reserved());
        assertEquals(1, b.reservation.grantsConsumed());
        assertEquals(3, b.reservation.reservedAtRound());
        assertSame(b.reservation, holders.first());
        assertInvariants(a, b);
    }

    @Test
    void releasingAWaiterCancelsItsWaitOrGivesBackAGrantNotTakenYet() {
        assertTrue(reservations.reserve(a.reservation, 100, 1));
        assertFalse(reservations.reserve(b.reservation, 30, 1));
        reservations.release(b.reservation);
        assertFalse(b.reservation.waiting());
        assertEquals(0, budget.waiting());
        assertEquals(100, budget.used());

        assertFalse(reservations.reserve(b.reservation, 30, 2));
        reservations.release(a.reservation); // b admitted: 30 charged for it
        assertEquals(30, budget.used());
        reservations.release(b.reservation); // closed before its network thread took the grant
        assertEquals(0, budget.used(), "the grant is given back");
        assertEquals(1, b.reservation.grantsConsumed(), "and counted as consumed, once");
        assertEquals(b.reservation.grants(), b.reservation.grantsConsumed());
        assertInvariants(a, b);
    }

    @Test
    void anIdleReservationIsRevokedOnlyWhileOthersWaitAfter20msAndTwoRounds() {
        assertTrue(reservations.reserve(a.reservation, 100, 1));
        now += Reservations.IDLE_NANOS;
        reservations.revokeIdle(holders, 3);
        assertEquals(0, a.revocations, "nobody waits");

        assertFalse(reservations.reserve(b.reservation, 10, 3));
        reservations.revokeIdle(holders, 2);
        assertEquals(0, a.revocations, "one round only since the grant");
        now -= 1;
        reservations.revokeIdle(holders, 3);
        assertEquals(0, a.revocations, "not 20 ms yet");
        now += 1;
        a.reading = false;
        reservations.revokeIdle(holders, 3);
        assertEquals(0, a.revocations, "muted: it is not idle on its reservation");

        a.reading = true;
        reservations.revokeIdle(holders, 3);
        assertEquals(1, a.revocations);
        assertEquals(1, revoked.sum());
        assertEquals(0, a.reservation.reserved());
        assertEquals(1, b.admissions, "the bytes went to the waiter");
        assertTrue(reservations.reserve(b.reservation, 10, 4));
        assertEquals(10, budget.used());
        assertInvariants(a, b);
    }

    @Test
    void aHolderNoLongerOwnedIsAFaultAndGivesItsBytesBackUnmuted() {
        assertTrue(reservations.reserve(a.reservation, 100, 1));
        assertFalse(reservations.reserve(b.reservation, 10, 1));
        a.owned = false;
        reservations.revokeIdle(holders, 2);
        assertEquals(0, faults.sum(), "not looked at before its reservation is old enough to revoke");
        now += Reservations.IDLE_NANOS;
        reservations.revokeIdle(holders, 3);
        assertEquals(1, faults.sum());
        assertEquals(0, a.revocations, "never muted: kpipe does not own it");
        assertEquals(0, a.reservation.reserved());
        assertEquals(1, b.admissions);
        assertInvariants(a, b);
    }

    /** A connection that counts how often {@link Reservations#revokeIdle} looks at it. */
    private static final class Watched implements Reservation.Holder {
        final Reservation reservation;
        int looks;
        int revocations;
        boolean reading = true;

        Watched(ReservationHolders holders) {
            reservation = new Reservation(this, holders);
        }

        @Override
        public void admitted() {
            reservation.granted();
        }

        @Override
        public boolean owned() {
            looks++;
            return true;
        }

        @Override
        public boolean reading() {
            return reading;
        }

        @Override
        public void revoke() {
            reading = false;
            revocations++;
        }
    }

    @Test
    void aRoundLooksOnlyAtReservationsOldEnoughToRevokeHoweverManyAreHeld() {
        ByteBudget big = new ByteBudget(1 << 20, 1 << 19, () -> now);
        Reservations rs = new Reservations(big, () -> now, revoked, faults);
        List<Watched> old = new ArrayList<>();
        List<Watched> young = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Watched w = new Watched(holders);
            assertTrue(rs.reserve(w.reservation, 100, 1));
            old.add(w);
        }
        old.get(1).reading = false; // muted for another reason: looked at, kept
        now += Reservations.IDLE_NANOS;
        for (int i = 0; i < 1000; i++) {
            Watched w = new Watched(holders);
            assertTrue(rs.reserve(w.reservation, 100, 3));
            young.add(w);
        }
        Watched waiter = new Watched(holders);
        assertFalse(rs.reserve(waiter.reservation, 1 << 20, 3), "queued: someone waits");
        assertNull(holders.invariantViolation());

        rs.revokeIdle(holders, 3);
        assertEquals(1, old.get(0).revocations);
        assertEquals(0, old.get(1).revocations, "not reading: not idle on its reservation");
        assertEquals(1, old.get(2).revocations, "the walk goes past a kept one");
        for (Watched w : young) {
            assertEquals(0, w.looks, "granted less than 20 ms ago: never looked at");
            assertEquals(0, w.revocations);
        }
        assertEquals(1001, holders.size());
        assertSame(old.get(1).reservation, holders.first(), "the kept one stays first, in grant order");
        assertNull(holders.invariantViolation());

        now += Reservations.IDLE_NANOS;
        rs.revokeIdle(holders, 4);
        assertEquals(0, young.get(0).revocations, "one round only since their grant");
        rs.revokeIdle(holders, 5);
        for (Watched w : young) {
            assertEquals(1, w.revocations, "old now: revoked");
        }
        assertEquals(1, holders.size());
        assertNull(holders.invariantViolation());
        for (Watched w : old) {
            assertNull(w.reservation.invariantViolation());
        }
    }

    @Test
    void holdersStayInGrantOrderAcrossRemovalsAnywhere() {
        List<Conn> conns = new ArrayList<>();
        ByteBudget big = new ByteBudget(1 << 20, 1 << 19, () -> now);
        Reservations rs = new Reservations(big, () -> now, revoked, faults);
        for (int i = 0; i < 6; i++) {
            Conn c = new Conn(holders);
            now += 1;
            assertTrue(rs.reserve(c.reservation, 10, i));
            conns.add(c);
        }
        rs.settle(conns.get(0).reservation, 10, false); // first
        rs.release(conns.get(3).reservation); // middle
        rs.settle(conns.get(5).reservation, 10, false); // last
        now += 1;
        assertTrue(rs.reserve(conns.get(0).reservation, 10, 7)); // granted again: appended
        assertEquals(4, holders.size());
        Reservation r = holders.first();
        for (int i : new int[] {1, 2, 4, 0}) {
            assertSame(conns.get(i).reservation, r);
            r = holders.next(r);
        }
        assertNull(r);
        assertNull(holders.invariantViolation());
        for (Conn c : conns) {
            assertNull(c.reservation.invariantViolation());
        }
    }
}
