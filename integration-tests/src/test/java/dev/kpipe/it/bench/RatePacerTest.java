// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fixed-load pacer on simulated time: counts due by the schedule, catch-up after a pause, the next due time. */
class RatePacerTest {
    private static final long S = 1_000_000_000L;
    private static final long START = 5 * S; // any System.nanoTime()-like origin

    @Test
    void nothingIsDueBeforeTheStartAndOneRecordAtIt() {
        RatePacer p = new RatePacer(1000, START);
        assertEquals(0, p.take(START - 1));
        assertEquals(1, p.take(START));
        assertEquals(0, p.take(START));
        assertEquals(START + 1_000_000, p.nextDueNanos(), "record 1 due 1 ms after record 0 at 1,000 records/s");
    }

    @Test
    void takesExactlyRateTimesElapsedOverAWindowWhateverTheCallPattern() {
        Random random = new Random(14);
        RatePacer p = new RatePacer(20_000 / 4.0, START); // S2F's default share: 5,000 records/s per producer
        long now = START;
        long taken = 0;
        while (now < START + 10 * S) {
            taken += p.take(now);
            now += 1 + random.nextInt(3_000_000); // calls 0 to 3 ms apart, as a parked sender would make them
        }
        taken += p.take(START + 10 * S);
        assertEquals(50_001, taken, "records 0..50,000 are due in [start, start + 10 s]");
        assertEquals(taken, p.issued());
    }

    @Test
    void aSenderThatWasPausedSendsTheOverdueRecordsAtOnce() {
        RatePacer p = new RatePacer(100, START);
        assertEquals(1, p.take(START));
        assertEquals(0, p.take(START + S / 200), "5 ms later: the next record is due at 10 ms");
        assertEquals(50, p.take(START + S / 2), "a 500 ms pause: records 1..50 are overdue, sent together");
        assertEquals(START + 510_000_000L, p.nextDueNanos());
    }

    @Test
    void theNextDueTimeIsWhenTakeReturnsTheNextRecord() {
        RatePacer p = new RatePacer(3, START); // a period of 333,333,333.3 ns: rounding must not lose a record
        for (int i = 0; i < 100; i++) {
            long due = p.nextDueNanos();
            assertEquals(0, p.take(due - 1), "record " + p.issued() + " is not due 1 ns early");
            assertEquals(1, p.take(due), "record " + p.issued() + " is due at its time");
        }
        assertTrue(p.nextDueNanos() > START + 33 * S);
    }

    @Test
    void rejectsARateThatIsNotPositiveAndFinite() {
        assertThrows(IllegalArgumentException.class, () -> new RatePacer(0, START));
        assertThrows(IllegalArgumentException.class, () -> new RatePacer(-1, START));
        assertThrows(IllegalArgumentException.class, () -> new RatePacer(Double.NaN, START));
        assertThrows(IllegalArgumentException.class, () -> new RatePacer(Double.POSITIVE_INFINITY, START));
    }
}
