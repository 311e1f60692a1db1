package dev.kpipe.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        assertSame(a.reservation, holders.get(0));
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
        assertSame(b.reservation, holders.get(0));
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
        reservations.revokeIdle(holders, 1);
        assertEquals(1, faults.sum());
        assertEquals(0, a.revocations, "never muted: kpipe does not own it");
        assertEquals(0, a.reservation.reserved());
        assertEquals(1, b.admissions);
        assertInvariants(a, b);
    }
}
