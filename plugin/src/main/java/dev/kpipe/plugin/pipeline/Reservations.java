package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.Ticker;
import java.util.ArrayList;

/**
 * Each pipelined connection's reservation of the broker-wide byte budget ({@code kpipe.max.inflight.bytes}) for the
 * request it reads next: Kafka learns a request's size only by reading it, so a connection is unmuted only once it
 * holds an estimate (its largest request so far), which the actual size then settles ({@link ByteBudget#settle}).
 *
 * <p>Invariants (checked by {@link ConnectionPipeline#invariantViolation()}): a connection holds a reservation
 * ({@code reserved > 0}) exactly when its processor lists it in {@link ProcessorPipelines#holders}; it never holds one
 * while it waits in the budget's FIFO ({@code waitingForBudget}); every reservation granted is either settled by a
 * read or released exactly once ({@link #release}, {@link #revokeIdle}).
 *
 * <p>Thread: the connection's network thread; the budget's {@link ByteBudget.Waiter#admitted()} callback reaches it
 * through {@link ProcessorPipelines#dispatched}.
 */
final class Reservations {

    /** How long a reservation may stay unused while others wait for the budget: 20 ms. */
    static final long IDLE_NANOS = 20_000_000L;

    private final ByteBudget budget;
    private final PipelineStats stats;
    private final Ticker ticker;

    /**
     * @param budget the broker-wide budget (unbounded when none is configured)
     * @param stats where revocations and faults are counted
     * @param ticker the clock of idle reservations
     */
    Reservations(ByteBudget budget, PipelineStats stats, Ticker ticker) {
        this.budget = budget;
        this.stats = stats;
        this.ticker = ticker;
    }

    /**
     * Charges a request read before its connection held a reservation (the request that upgrades a classic
     * connection), if the budget admits it now ({@link ByteBudget#tryAdmitRead}).
     *
     * @param bytes the request's size
     * @return true if charged
     */
    boolean tryAdmitRead(int bytes) {
        return budget.tryAdmitRead(bytes);
    }

    /**
     * A request was read: its actual size replaces the connection's reservation (charged already by
     * {@link #tryAdmitRead} for the request that upgraded the connection).
     *
     * @param conn the connection
     * @param bytes the request's size
     * @param upgrade whether this request upgraded the connection
     */
    void settle(ConnectionPipeline conn, int bytes, boolean upgrade) {
        if (!upgrade) {
            budget.settle(conn.reserved, bytes);
        }
        conn.reserved = 0;
        conn.processor.removeHolder(conn);
    }

    /**
     * Makes sure the connection holds a reservation of the global budget for its next read.
     *
     * @param conn the connection
     * @return true if it holds one; false if it waits (it is admitted later, in FIFO order)
     */
    boolean reserve(ConnectionPipeline conn) {
        if (conn.reserved > 0) {
            return true;
        }
        if (conn.waitingForBudget) {
            if (!conn.takeGrant()) {
                return false;
            }
            conn.waitingForBudget = false;
            holds(conn, conn.reservationWanted);
            return true;
        }
        long want = Math.max(1, conn.largestRequest);
        long got = budget.tryReserve(conn, want);
        if (got > 0) {
            holds(conn, got);
            return true;
        }
        conn.waitingForBudget = true;
        conn.reservationWanted = budget.clamp(want);
        return false;
    }

    private void holds(ConnectionPipeline conn, long bytes) {
        conn.reserved = bytes;
        conn.reservedAtNanos = ticker.nanos();
        conn.reservedAtRound = conn.processor.rounds;
        conn.processor.addHolder(conn);
    }

    /**
     * Returns the connection's reservation for its next read, granted or still awaited.
     *
     * @param conn the connection
     */
    void release(ConnectionPipeline conn) {
        if (conn.waitingForBudget) {
            conn.waitingForBudget = false;
            if (!budget.cancel(conn)) {
                // Admitted meanwhile: the reservation is held. Its grant is consumed here, even if
                // admitted() has not counted it yet.
                conn.grantsConsumed++;
                budget.release(conn.reservationWanted);
            }
        }
        budget.release(conn.reserved);
        conn.reserved = 0;
        conn.processor.removeHolder(conn);
    }

    /**
     * While connections wait for the byte budget, a connection that reserved bytes for its next
     * request {@link #IDLE_NANOS} or more ago, with at least one poll of its processor
     * since (so a slow round cannot revoke a grant before its request could be read), and has read
     * nothing since gives them
     * back and waits in line again (muted): an idle connection must not hold budget that others
     * wait for, nor keep an oversize reservation from ever seeing the budget empty.
     *
     * @param p the processor whose holders to look at, at the start of its round
     */
    void revokeIdle(ProcessorPipelines p) {
        if (budget.waiting() == 0) {
            return;
        }
        long now = ticker.nanos();
        ArrayList<ConnectionPipeline> holders = p.holders;
        // backwards: a revoked connection leaves the list and the last one takes its index
        for (int i = holders.size() - 1; i >= 0; i--) {
            ConnectionPipeline c = holders.get(i);
            if (!c.state().owned()) {
                // Cannot happen: closing or handing back a connection releases its reservation. Never mute a
                // connection kpipe does not own; give its reservation back.
                budget.release(c.reserved);
                c.reserved = 0;
                p.removeHolder(c);
                stats.pluginFaults.increment();
                continue;
            }
            if (!c.muted && c.state() == ConnectionState.PIPELINED
                && now - c.reservedAtNanos >= IDLE_NANOS && p.rounds - c.reservedAtRound >= 2) {
                p.processor.mute(c.id);
                c.muted = true;
                long bytes = c.reserved;
                c.reserved = 0;
                p.removeHolder(c);
                stats.reservationsRevoked.increment();
                budget.release(bytes);
                c.schedule();
            }
        }
    }
}
