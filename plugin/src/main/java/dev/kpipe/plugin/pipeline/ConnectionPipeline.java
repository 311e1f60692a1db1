package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.quotas.MuteReason;
import dev.kpipe.quotas.MuteReasons;
import dev.kpipe.quotas.ThrottleWindows;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The state of one connection that kpipe owns (pipelined, or draining back to classic). A connection
 * Kafka owns (classic) has no such object.
 *
 * <p>Owned by the connection's network thread, except {@link #awaitingDispatch}, which a handler
 * thread clears. The connection dump ({@link ConnectionSnapshot}, a JMX thread) reads {@link #mode}, {@link #context}
 * and the {@code published*} fields, which are volatile or written with opaque stores (no fence, no allocation; see
 * {@link #publish()}), and a few plain boolean, int and reference fields, which the JLS (17.7) makes atomic: a moment
 * stale at worst, never torn.
 */
final class ConnectionPipeline implements ByteBudget.Waiter {

    /** Modes of a connection kpipe owns. */
    enum Mode {
        /** Requests are read as soon as the previous one is dispatched. */
        PIPELINED,
        /**
         * Muted until every earlier response is written, then handed back to Kafka: with the exclusive request that
         * started the drain held meanwhile, or the SASL re-authentication (KIP-368) that started it, or, when kpipe was
         * disabled at runtime, with nothing held.
         */
        DRAINING
    }

    final String id;
    final ProcessorPipelines processor;
    /** Volatile for the connection dump; written on the network thread when a drain starts. */
    volatile Mode mode = Mode.PIPELINED;
    /**
     * The context of the request that upgraded the connection (listener, principal, client id and software), or of the
     * first request read after a deferred upgrade; {@code null} until then. Read by the connection dump only.
     */
    volatile RequestContext context;
    /** When kpipe took the connection over ({@link System#nanoTime}). */
    final long upgradedNanos = System.nanoTime();
    /** Responses of this connection held for ordering now (its share of {@code held-responses}). */
    int heldResponses;
    /** {@link #slots}' size as of the last {@link #publish()}; opaque access. */
    private int publishedInflight;
    /** {@link #inflightBytes} as of the last {@link #publish()}; opaque access. */
    private long publishedInflightBytes;
    /** The oldest slot's {@link Slot#readNanos}, 0 for none, as of the last {@link #publish()}; opaque access. */
    private long publishedOldestReadNanos;
    /** {@link #heldResponses} as of the last {@link #publish()}; opaque access. */
    private int publishedHeldResponses;
    /** Requests read and not yet answered, in arrival order. */
    final ArrayDeque<Slot> slots = new ArrayDeque<>();
    /** Sum of the slots' bytes. */
    long inflightBytes;
    /** The head slot's response was handed to the broker and has not completed. */
    boolean sendOutstanding;
    /** The request in the dispatch phase, or {@code null}; cleared by the handler thread. */
    volatile Object awaitingDispatch;
    final ThrottleWindows throttle = new ThrottleWindows();
    /** When the first of the currently open throttle windows opened ({@link System#nanoTime}). */
    long throttleStartNanos;
    /** The exclusive request held for a drain, or {@code null} (also while draining because kpipe was disabled). */
    Object held;
    /**
     * The re-authentication (the broker's opaque handle) held for a drain, or {@code null}; at most one of this and
     * {@link #held} is set.
     */
    Object heldReauthentication;
    /** When the connection last finished writing a response ({@link System#nanoTime}), or 0. */
    long lastWrittenNanos;
    /** A wake-up is scheduled for the end of the quiet period of {@link #heldReauthentication}. */
    boolean quietWakeupScheduled;
    long drainStartNanos;
    /** What kpipe last made of the selector's mute state: reading a request mutes. */
    boolean muted = true;
    boolean closed;
    /** Queued for evaluation in {@link ProcessorPipelines#pending}. */
    boolean scheduled;
    /** Bytes of the global budget reserved for the next request read, or 0. */
    long reserved;
    /** When {@link #reserved} was granted ({@link System#nanoTime}). */
    long reservedAtNanos;
    /** The processor round in which {@link #reserved} was granted ({@link ProcessorPipelines#rounds}). */
    long reservedAtRound;
    /** Index in {@link ProcessorPipelines#holders}, or -1 when not listed (no reservation held). */
    int holderIndex = -1;
    /** The reservation asked for while waiting for the budget. */
    long reservationWanted;
    /** Queued in the global budget's FIFO. */
    boolean waitingForBudget;
    /** Grants of the budget so far, counted by the releasing thread in {@link #admitted()}. */
    final AtomicInteger grants = new AtomicInteger();
    /** Grants used or released by the network thread (a grant can be counted after it was released). */
    int grantsConsumed;
    /** The largest request read so far, in bytes: the estimate reserved for the next one. */
    int largestRequest;
    /** Kept muted only because the storage side is saturated; re-evaluated every round. */
    boolean pressureBlocked;
    /**
     * The broker refused a request read on this connection (see
     * {@link dev.kpipe.spi.NetworkEventListener#onRequestRejected}): it stays muted and is closed once every earlier
     * response is written.
     */
    boolean closeAfterDrain;

    ConnectionPipeline(String id, ProcessorPipelines processor) {
        this.id = id;
        this.processor = processor;
    }

    private static final VarHandle INFLIGHT;
    private static final VarHandle INFLIGHT_BYTES;
    private static final VarHandle OLDEST_READ_NANOS;
    private static final VarHandle HELD_RESPONSES;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            INFLIGHT = l.findVarHandle(ConnectionPipeline.class, "publishedInflight", int.class);
            INFLIGHT_BYTES = l.findVarHandle(ConnectionPipeline.class, "publishedInflightBytes", long.class);
            OLDEST_READ_NANOS = l.findVarHandle(ConnectionPipeline.class, "publishedOldestReadNanos", long.class);
            HELD_RESPONSES = l.findVarHandle(ConnectionPipeline.class, "publishedHeldResponses", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Publishes the in-flight counts, the oldest request's read time and the held responses for the connection dump.
     * Network thread, after each change of {@link #slots} or {@link #heldResponses}: four opaque stores (plain stores
     * on x86 and ARM, atomic even for the longs), no fence, no allocation.
     */
    void publish() {
        Slot head = slots.peekFirst();
        INFLIGHT.setOpaque(this, slots.size());
        INFLIGHT_BYTES.setOpaque(this, inflightBytes);
        OLDEST_READ_NANOS.setOpaque(this, head == null ? 0L : head.readNanos);
        HELD_RESPONSES.setOpaque(this, heldResponses);
    }

    /** @return requests in flight as last published; thread: any */
    int publishedInflight() {
        return (int) INFLIGHT.getOpaque(this);
    }

    /** @return bytes in flight as last published; thread: any */
    long publishedInflightBytes() {
        return (long) INFLIGHT_BYTES.getOpaque(this);
    }

    /** @return the oldest in-flight request's read time ({@link System#nanoTime}), 0 for none; thread: any */
    long publishedOldestReadNanos() {
        return (long) OLDEST_READ_NANOS.getOpaque(this);
    }

    /** @return responses held for ordering as last published; thread: any */
    int publishedHeldResponses() {
        return (int) HELD_RESPONSES.getOpaque(this);
    }

    /**
     * @param limits the per-connection in-flight limits
     * @return the reasons this connection must stay muted now ({@link MuteReasons} bits)
     */
    int muteReasons(InflightLimits limits) {
        int r = MuteReasons.NONE;
        r = MuteReasons.withIf(r, MuteReason.AWAITING_DISPATCH, awaitingDispatch != null);
        r = MuteReasons.withIf(r, MuteReason.DRAINING, mode == Mode.DRAINING);
        r = MuteReasons.withIf(r, MuteReason.THROTTLED, throttle.throttled());
        r = MuteReasons.withIf(r, MuteReason.BACK_PRESSURE, !limits.admitsAnother(slots.size(), inflightBytes));
        return r;
    }

    /** Thread: any. The budget granted the reservation: evaluate this connection on its own thread. */
    @Override
    public void admitted() {
        grants.incrementAndGet();
        processor.dispatched.add(this);
        processor.processor.wakeup();
    }

    /** @return true if a grant arrived that the network thread has not used or released yet */
    boolean takeGrant() {
        if (grants.get() - grantsConsumed > 0) {
            grantsConsumed++;
            return true;
        }
        return false;
    }

    /** @return the slot of the request, or {@code null} (scans from the oldest; the list is short) */
    Slot slotOf(Object request) {
        for (Slot s : slots) {
            if (s.request == request) {
                return s;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "connection " + id + " " + mode + " inflight=" + slots.size() + " bytes=" + inflightBytes
            + " sendOutstanding=" + sendOutstanding + " throttles=" + throttle.open()
            + " awaitingDispatch=" + (awaitingDispatch != null) + " held=" + (held != null)
            + " heldReauthentication=" + (heldReauthentication != null) + " muted=" + muted
            + " reserved=" + reserved + " waitingForBudget=" + waitingForBudget
            + (closeAfterDrain ? " closeAfterDrain" : "");
    }
}
