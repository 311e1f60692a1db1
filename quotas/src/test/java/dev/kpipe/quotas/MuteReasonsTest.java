package dev.kpipe.quotas;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class MuteReasonsTest {

    @Test
    void noneHoldsNoReason() {
        for (MuteReason r : MuteReason.values()) {
            assertFalse(MuteReasons.has(MuteReasons.NONE, r));
        }
        assertEquals("[]", MuteReasons.toString(MuteReasons.NONE));
    }

    @Test
    void everyReasonHasItsOwnBit() {
        int all = MuteReasons.NONE;
        for (MuteReason r : MuteReason.values()) {
            assertEquals(1, Integer.bitCount(r.bit()));
            assertEquals(0, all & r.bit(), r + " shares a bit");
            all = MuteReasons.with(all, r);
        }
        for (MuteReason r : MuteReason.values()) {
            assertTrue(MuteReasons.has(all, r));
        }
    }

    @Test
    void withIsIdempotentAndWithIfAddsOnlyWhenPresent() {
        int r = MuteReasons.with(MuteReasons.NONE, MuteReason.THROTTLED);
        assertEquals(r, MuteReasons.with(r, MuteReason.THROTTLED));
        assertEquals(r, MuteReasons.withIf(r, MuteReason.DRAINING, false));
        int both = MuteReasons.withIf(r, MuteReason.DRAINING, true);
        assertNotEquals(r, both);
        assertTrue(MuteReasons.has(both, MuteReason.DRAINING));
        assertTrue(MuteReasons.has(both, MuteReason.THROTTLED));
        assertFalse(MuteReasons.has(both, MuteReason.BACK_PRESSURE));
    }

    @Test
    void toStringListsTheReasonsInDeclarationOrder() {
        int r = MuteReasons.with(
                MuteReasons.with(MuteReasons.NONE, MuteReason.BACK_PRESSURE), MuteReason.AWAITING_DISPATCH);
        assertEquals("[AWAITING_DISPATCH, BACK_PRESSURE]", MuteReasons.toString(r));
    }

    /** Events that change one of a connection's independent mute conditions. */
    enum Event {
        READ_REQUEST,
        DISPATCHED,
        DRAIN_STARTED,
        DRAIN_DONE,
        THROTTLE_STARTED,
        THROTTLE_ENDED,
        LIMIT_REACHED,
        LIMIT_FREED
    }

    /**
     * The reasons of a connection composed from its conditions, as {@code ConnectionPipeline} does,
     * after any sequence of events: the connection may be unmuted exactly when no condition holds,
     * and each reason is reported exactly while its condition holds. Throttle windows are counted
     * ({@link ThrottleWindows}); an end without a start is ignored.
     */
    @Property(seed = "1401", tries = 500)
    void composedReasonsAreEmptyExactlyWhenNoConditionHolds(@ForAll("events") List<Event> events) {
        boolean awaiting = false;
        boolean draining = false;
        boolean limit = false;
        int windows = 0;
        ThrottleWindows throttle = new ThrottleWindows();
        for (Event e : events) {
            switch (e) {
                case READ_REQUEST -> awaiting = true;
                case DISPATCHED -> awaiting = false;
                case DRAIN_STARTED -> draining = true;
                case DRAIN_DONE -> draining = false;
                case THROTTLE_STARTED -> {
                    throttle.start();
                    windows++;
                }
                case THROTTLE_ENDED -> {
                    assertEquals(windows > 0, throttle.end());
                    windows = Math.max(0, windows - 1);
                }
                case LIMIT_REACHED -> limit = true;
                case LIMIT_FREED -> limit = false;
            }
            int reasons = MuteReasons.NONE;
            reasons = MuteReasons.withIf(reasons, MuteReason.AWAITING_DISPATCH, awaiting);
            reasons = MuteReasons.withIf(reasons, MuteReason.DRAINING, draining);
            reasons = MuteReasons.withIf(reasons, MuteReason.THROTTLED, throttle.throttled());
            reasons = MuteReasons.withIf(reasons, MuteReason.BACK_PRESSURE, limit);

            EnumSet<MuteReason> holding = EnumSet.noneOf(MuteReason.class);
            if (awaiting) {
                holding.add(MuteReason.AWAITING_DISPATCH);
            }
            if (draining) {
                holding.add(MuteReason.DRAINING);
            }
            if (windows > 0) {
                holding.add(MuteReason.THROTTLED);
            }
            if (limit) {
                holding.add(MuteReason.BACK_PRESSURE);
            }
            assertEquals(
                    holding.isEmpty(),
                    reasons == MuteReasons.NONE,
                    "unmuted iff no reason holds, after " + e + ": " + MuteReasons.toString(reasons));
            for (MuteReason r : MuteReason.values()) {
                assertEquals(holding.contains(r), MuteReasons.has(reasons, r), r + " after " + e);
            }
            assertEquals(holding.toString(), MuteReasons.toString(reasons));
            assertEquals(windows, throttle.open());
        }
    }

    @Provide
    Arbitrary<List<Event>> events() {
        return Arbitraries.of(Event.class).list().ofMaxSize(200);
    }
}
