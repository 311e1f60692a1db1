// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservation;
import dev.kpipe.backpressure.ReservationHolders;
import dev.kpipe.backpressure.Reservations;
import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;

/**
 * kpipe's per-processor state, found in the coordinator's {@link ProcessorTable}, and the only writer of it: the queues its
 * connections join ({@link ProcessorQueues}: what a connection tells it), the round's storage-side signal, the
 * deferred upgrades. {@link Rounds} drives a round through the methods below; nothing outside writes a field.
 *
 * <p>Thread: the processor's network thread, except {@link #signalled} (handler threads, the budget's releasing
 * thread, the config thread).
 */
final class ProcessorPipelines<Q, S> implements ProcessorQueues<Q, S, ConnectionPipeline<Q, S>> {
    private final NetworkProcessor<Q, S> processor;
    /**
     * Responses released in order (each the head of its connection), handed to the broker before anything else still
     * queued in the broker's response queue.
     */
    private final ArrayDeque<S> ready = new ArrayDeque<>();
    /**
     * Connections signalled from other threads: a handler dispatched their request, the byte budget admitted them, or
     * kpipe was disabled (they must drain). Intrusive: a signal allocates nothing.
     */
    private final SignalQueue<ConnectionPipeline<Q, S>> signalled = new SignalQueue<>();
    /** Connections to evaluate at the next round. */
    private final ArrayList<ConnectionPipeline<Q, S>> pending = new ArrayList<>();
    /**
     * Exactly the reservations of this processor's connections that hold bytes of the budget for their next read
     * ({@code reserved > 0}), in the order they were granted.
     */
    private final ReservationHolders holders = new ReservationHolders();
    /**
     * Classic connections whose upgrade the byte budget deferred, by connection id, with the size of the request that
     * would have upgraded them (bytes): kpipe takes them over when Kafka is about to unmute them.
     */
    private final HashMap<String, Integer> upgradesDeferred = new HashMap<>();
    /** Drained connections whose held re-authentication waits for its quiet period; evaluated at the next round. */
    private final ArrayList<ConnectionPipeline<Q, S>> awaitingQuiet = new ArrayList<>();
    /**
     * Exactly the connections kept muted by storage-side saturation ({@link ConnectionPipeline#pressureBlocked()}),
     * evaluated again at a round once pressure may have cleared.
     */
    private final ArrayList<ConnectionPipeline<Q, S>> pressureBlocked = new ArrayList<>();
    /** Processor rounds seen so far. */
    private long rounds;
    /** The broker-wide storage-side signal as read in this round, or {@link StorageSignal#UNREAD}: once per round. */
    private int roundSignal = StorageSignal.UNREAD;
    /** The per-topic signal as read in this round, or {@link StorageSignal#UNREAD}. */
    private int roundTopicSignal = StorageSignal.UNREAD;
    /** A connection of {@link #pressureBlocked} was released in this round: the list is pruned at its end. */
    private boolean pressureReleased;
    /** A connection waits on broker-wide saturation (not a topic's): evaluated again as soon as that clears. */
    private boolean blockedGlobally;
    /** The storage source's count of clears when this processor's waiting connections were last evaluated again. */
    private long pressureCheckedClears;
    /** When they were (the coordinator's clock). */
    private long pressureCheckedNanos;

    ProcessorPipelines(NetworkProcessor<Q, S> processor) {
        this.processor = processor;
    }

    // ---------------------------------------------------------------- ProcessorQueues: what a connection says

    @Override
    public NetworkProcessor<Q, S> processor() {
        return processor;
    }

    @Override
    public long round() {
        return rounds;
    }

    @Override
    public void scheduled(ConnectionPipeline<Q, S> conn) {
        pending.add(conn);
    }

    @Override
    public void signalled(ConnectionPipeline<Q, S> conn, boolean wake) {
        signalled.add(conn);
        if (wake) {
            processor.wakeup();
        }
    }

    /**
     * Queues {@code conn} for the next round and wakes the processor unless a response waits in the broker's queue:
     * the broker woke the processor for it, and the end of the round that takes it ({@code processNewResponses}' exit)
     * takes this queue too. The check follows the queueing, so that round takes {@code conn}. Thread: any.
     */
    @Override
    public boolean dispatchSignalled(ConnectionPipeline<Q, S> conn) {
        signalled.add(conn);
        if (processor.responsesQueued()) {
            return false;
        }
        processor.wakeup();
        return true;
    }

    @Override
    public void quietWaitStarted(ConnectionPipeline<Q, S> conn) {
        awaitingQuiet.add(conn);
    }

    @Override
    public void pressureWaitStarted(ConnectionPipeline<Q, S> conn, boolean listed, boolean global) {
        if (listed) {
            pressureBlocked.add(conn);
        }
        blockedGlobally |= global;
    }

    @Override
    public void pressureWaitEnded() {
        pressureReleased = true;
    }

    @Override
    public void responseReleased(S response) {
        ready.addLast(response);
    }

    @Override
    public boolean releasedResponseWithdrawn(S response) {
        return ready.removeFirstOccurrence(response);
    }

    @Override
    public Reservation newReservation(Reservation.Holder holder) {
        return new Reservation(holder, holders);
    }

    // ---------------------------------------------------------------- a round (Rounds)

    /**
     * A round starts: the storage-side signal is unread again, the connections other threads signalled and those
     * waiting for a quiet period are queued for evaluation, and idle reservations are revoked.
     *
     * @param reservations revokes the idle reservations of this processor's holders
     */
    void roundStarted(Reservations reservations) {
        rounds++;
        roundSignal = StorageSignal.UNREAD;
        roundTopicSignal = StorageSignal.UNREAD;
        ConnectionPipeline<Q, S> conn;
        while ((conn = signalled.poll()) != null) {
            conn.schedule();
        }
        if (!holders.isEmpty()) {
            reservations.revokeIdle(holders, rounds);
        }
        if (!awaitingQuiet.isEmpty()) {
            for (ConnectionPipeline<Q, S> c : awaitingQuiet) {
                c.schedule();
            }
            awaitingQuiet.clear();
        }
    }

    /** @return the broker-wide storage-side signal, read at most once per round: the first call reads it */
    int roundSignal(StorageSignal signal) {
        if (roundSignal == StorageSignal.UNREAD) {
            roundSignal = signal.read();
        }
        return roundSignal;
    }

    /** @return the per-topic storage-side signal, read at most once per round */
    int roundTopicSignal(StorageSignal signal) {
        if (roundTopicSignal == StorageSignal.UNREAD) {
            roundTopicSignal = signal.readTopics();
        }
        return roundTopicSignal;
    }

    /** @return true if some connection waits on storage-side saturation */
    boolean pressureWaits() {
        return !pressureBlocked.isEmpty();
    }

    /** @return true if a connection waits on broker-wide saturation (not a topic's) */
    boolean blockedGlobally() {
        return blockedGlobally;
    }

    /** @return the storage source's count of clears when the waiting connections were last evaluated again */
    long pressureCheckedClears() {
        return pressureCheckedClears;
    }

    /** @return when they were (the coordinator's clock) */
    long pressureCheckedNanos() {
        return pressureCheckedNanos;
    }

    /**
     * Pressure may have cleared: every connection waiting on it is evaluated again this round (those still waiting stay
     * listed, released ones are pruned at the round's end).
     *
     * @param clears the source's count of clears now
     * @param nowNanos the coordinator's clock
     */
    void pressureRechecked(long clears, long nowNanos) {
        for (ConnectionPipeline<Q, S> c : pressureBlocked) {
            c.schedule();
        }
        blockedGlobally = false;
        pressureCheckedClears = clears;
        pressureCheckedNanos = nowNanos;
    }

    /** @return how many connections are queued for evaluation; the queue may grow during the round */
    int pendingCount() {
        return pending.size();
    }

    /** @return the {@code i}th connection queued for evaluation */
    ConnectionPipeline<Q, S> pending(int i) {
        return pending.get(i);
    }

    /** The round ends: every queued connection was evaluated; released pressure waits are pruned. */
    void roundEnded() {
        pending.clear();
        if (pressureReleased) {
            pressureReleased = false;
            pressureBlocked.removeIf(c -> !c.pressureBlocked());
        }
    }

    // ---------------------------------------------------------------- deferred upgrades, released responses

    /**
     * @param connectionId a classic connection whose upgrade the byte budget deferred
     * @param size the size of the request that would have upgraded it, bytes
     */
    void upgradeDeferred(String connectionId, int size) {
        upgradesDeferred.put(connectionId, size);
    }

    /** @return the size of the request whose upgrade was deferred on the connection, now forgotten; or null */
    Integer takeDeferredUpgrade(String connectionId) {
        return upgradesDeferred.isEmpty() ? null : upgradesDeferred.remove(connectionId);
    }

    /** @return the next response released in order, or {@code null} */
    S pollReady() {
        return ready.pollFirst();
    }

    /** @return true if no response is released and waiting to be processed */
    boolean noneReady() {
        return ready.isEmpty();
    }

    /** @return true if nothing is queued: no signal, no connection to evaluate, no released response (for tests) */
    boolean nothingQueued() {
        return signalled.isEmpty() && pending.isEmpty() && ready.isEmpty();
    }

    /** @return true if a connection waits for its quiet period (for tests) */
    boolean quietWaits() {
        return !awaitingQuiet.isEmpty();
    }
}
