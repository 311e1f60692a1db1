// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.spi.NetworkProcessor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;

/**
 * The requests read on one pipelined connection and not yet answered, in arrival order, with their responses once
 * ready (Redpanda keeps a connection's responses by an internal sequence number the same way): the order in which the
 * responses are written, whatever order the handlers and the purgatory complete them in. Correlation ids are never
 * looked at.
 *
 * <p>Invariants ({@link #invariantViolation()}): at most one send is outstanding, and only for the head request; every
 * other request with a response is counted in {@link #heldResponses()}, and the broker-wide {@code held-responses}
 * gauge moves with it; {@code inflight-requests} moves with {@link #size()}; {@link #bytes()} is the sum of the
 * requests' sizes, and each request's {@link Slot} holds its permit of the byte budget until its response is written
 * or its connection is let go ({@link #releaseAll}). Slots are reused, so a request allocates nothing in steady state.
 *
 * <p>Thread: the connection's network thread. The connection dump (a JMX thread) reads only the published values
 * ({@link #publishedCount()} and the others), written with opaque stores after each change: no fence, no allocation;
 * each is current within a moment, not one atomic picture.
 */
final class InflightRequests<Q, S> implements InflightView<Q, S> {

    private final PipelineStats stats;
    /** Requests read and not yet answered, in arrival order. */
    private final ArrayDeque<Slot<Q, S>> slots = new ArrayDeque<>(1);
    /** Slots whose response was written, kept for the next requests (at most the connection's peak in flight). */
    private final ArrayDeque<Slot<Q, S>> freeSlots = new ArrayDeque<>(1);
    /** Sum of the slots' sizes, bytes. */
    private long bytes;
    /** The head slot's response was handed to the broker and has not completed. */
    private boolean sendOutstanding;
    /** Slots with a response other than the outstanding head: this connection's share of {@code held-responses}. */
    private int heldResponses;
    /** Requests in flight per row of the table of pipelined APIs, by ordinal. */
    private final int[] byApi = new int[PipelinedApi.values().length];

    private int publishedCount;
    private long publishedBytes;
    private long publishedOldestReadNanos;
    private int publishedHeldResponses;
    private boolean publishedUndrained;

    private static final VarHandle COUNT;
    private static final VarHandle BYTES;
    private static final VarHandle OLDEST_READ_NANOS;
    private static final VarHandle HELD_RESPONSES;
    private static final VarHandle UNDRAINED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            COUNT = l.findVarHandle(InflightRequests.class, "publishedCount", int.class);
            BYTES = l.findVarHandle(InflightRequests.class, "publishedBytes", long.class);
            OLDEST_READ_NANOS = l.findVarHandle(InflightRequests.class, "publishedOldestReadNanos", long.class);
            HELD_RESPONSES = l.findVarHandle(InflightRequests.class, "publishedHeldResponses", int.class);
            UNDRAINED = l.findVarHandle(InflightRequests.class, "publishedUndrained", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** @param stats the gauges that move with this connection's counts ({@code inflight-requests}, ...) */
    InflightRequests(PipelineStats stats) {
        this.stats = stats;
    }

    /**
     * A request was read: it is the newest in flight.
     *
     * @param request the broker's request handle
     * @param size its size on the wire, bytes, charged on the byte budget by the caller: the slot's permit
     * @param readNanos when it was read (the coordinator's clock)
     * @param api its row of the table of pipelined APIs
     * @return the requests in flight now
     */
    int add(Q request, int size, long readNanos, PipelinedApi api) {
        Slot<Q, S> s = freeSlots.pollFirst();
        slots.addLast((s == null ? new Slot<Q, S>() : s).fill(request, size, readNanos, api));
        bytes += size;
        stats.inflightRequests.incrementAndGet();
        stats.pipelinedRequests.increment();
        stats.recordInflight(slots.size());
        stats.requestAdmitted(api, ++byApi[api.ordinal()]);
        publish();
        return slots.size();
    }

    /** @return true if no request is in flight */
    @Override
    public boolean isEmpty() {
        return slots.isEmpty();
    }

    /** @return requests read and not yet answered */
    @Override
    public int size() {
        return slots.size();
    }

    /** @return their size, bytes */
    @Override
    public long bytes() {
        return bytes;
    }

    /** @return true while the head request's response is handed to the broker and not yet completed */
    @Override
    public boolean sendOutstanding() {
        return sendOutstanding;
    }

    /**
     * @return true if the client is not draining its responses: the head's response is handed to the broker and its
     *     write not completed, while at least one further response is held behind it ({@link WaitReason#UNDRAINED})
     */
    @Override
    public boolean undrained() {
        return sendOutstanding && heldResponses > 0;
    }

    /** @return responses ready but held behind an earlier one of this connection */
    @Override
    public int heldResponses() {
        return heldResponses;
    }

    /** @return true if {@code request} is in flight here (scans from the oldest; the list is short) */
    boolean contains(Q request) {
        return slotOf(request) != null;
    }

    private Slot<Q, S> slotOf(Q request) {
        for (Slot<Q, S> s : slots) {
            if (s.request == request) {
                return s;
            }
        }
        return null;
    }

    /** What {@link #responseReady} decided. */
    enum Placement {
        /** Not a response to a request in flight here: the broker processes it as it comes. */
        NOT_OURS,
        /** The broker processes it now: it is the head's, and no send is outstanding (or it was released). */
        SEND,
        /** Held until every earlier response of the connection is written. */
        HELD
    }

    /**
     * A response to one of the requests reached the network thread (dequeued from the broker's response queue, or
     * taken from the processor's ready queue after {@link #releaseNext}).
     *
     * @param request the request it answers
     * @param response the broker's response handle
     * @return whether the broker processes it now
     */
    Placement responseReady(Q request, S response) {
        Slot<Q, S> slot = slotOf(request);
        if (slot == null) {
            return Placement.NOT_OURS;
        }
        if (slot.response == response) {
            return Placement.SEND; // released by releaseNext: it is the head and its turn
        }
        slot.response = response;
        if (!sendOutstanding && slots.peekFirst() == slot) {
            sendOutstanding = true;
            return Placement.SEND;
        }
        heldResponses++;
        stats.heldResponses.incrementAndGet();
        publish();
        return Placement.HELD;
    }

    /**
     * The broker finished with a response (written, or an acks=0 no-op processed): if it is the outstanding head's,
     * that request leaves and gives its permit back.
     *
     * @param response the broker's response handle
     * @param budget the budget the permit goes back to
     * @return true if it was this connection's outstanding send; false if not (nothing changed)
     */
    boolean written(S response, ByteBudget budget) {
        Slot<Q, S> head = slots.peekFirst();
        if (head == null || head.response != response) {
            return false;
        }
        slots.pollFirst();
        bytes -= head.bytes;
        byApi[head.api.ordinal()]--;
        head.releasePermit(budget);
        sendOutstanding = false;
        stats.inflightRequests.decrementAndGet();
        head.request = null;
        head.response = null;
        head.api = null;
        freeSlots.addFirst(head);
        publish();
        return true;
    }

    /**
     * After {@link #written}: the next request's response, if ready, becomes the outstanding send.
     *
     * @return that response, for the processor's ready queue; {@code null} if none is ready
     */
    S releaseNext() {
        Slot<Q, S> next = slots.peekFirst();
        if (sendOutstanding || next == null || next.response == null) {
            return null;
        }
        sendOutstanding = true;
        heldResponses--;
        stats.heldResponses.decrementAndGet();
        publish();
        return next.response;
    }

    /**
     * The connection is let go (handed back or closed): every permit goes back to the budget, once, and the requests
     * leave {@code inflight-requests}. Responses are not touched: {@link #discardResponses} first on close.
     *
     * @param budget the budget
     */
    void releaseAll(ByteBudget budget) {
        stats.inflightRequests.addAndGet(-slots.size());
        for (Slot<Q, S> s : slots) {
            s.releasePermit(budget);
        }
        slots.clear();
        java.util.Arrays.fill(byApi, 0);
        bytes = 0;
        sendOutstanding = false;
        publish();
    }

    /**
     * The connection closed: every response the connection holds, or released to the processor's ready queue, is
     * discarded (the broker completes it as for a closed connection), except the one the broker is sending, which it
     * completes itself on close.
     *
     * @param withdrawn takes a response out of the processor's ready queue: true if it was there
     * @param processor the processor
     */
    void discardResponses(java.util.function.Predicate<S> withdrawn, NetworkProcessor<Q, S> processor) {
        Slot<Q, S> head = slots.peekFirst();
        for (Slot<Q, S> s : slots) {
            if (s.response == null) {
                continue;
            }
            if (withdrawn.test(s.response)) {
                processor.discard(s.response);
            } else if (!(s == head && sendOutstanding)) {
                heldResponses--;
                stats.heldResponses.decrementAndGet();
                processor.discard(s.response);
            }
            // else: the broker holds it in flight and completes it itself on close
        }
    }

    /**
     * Publishes the counts for the connection dump: five opaque stores (plain stores on x86 and ARM, atomic even for
     * the longs), no fence, no allocation.
     */
    private void publish() {
        Slot<Q, S> head = slots.peekFirst();
        COUNT.setOpaque(this, slots.size());
        BYTES.setOpaque(this, bytes);
        OLDEST_READ_NANOS.setOpaque(this, head == null ? 0L : head.readNanos);
        HELD_RESPONSES.setOpaque(this, heldResponses);
        UNDRAINED.setOpaque(this, undrained());
    }

    /** @return requests in flight as last published; thread: any */
    @Override
    public int publishedCount() {
        return (int) COUNT.getOpaque(this);
    }

    /** @return bytes in flight as last published; thread: any */
    @Override
    public long publishedBytes() {
        return (long) BYTES.getOpaque(this);
    }

    /** @return the oldest in-flight request's read time (the coordinator's clock), 0 for none; thread: any */
    @Override
    public long publishedOldestReadNanos() {
        return (long) OLDEST_READ_NANOS.getOpaque(this);
    }

    /** @return responses held for ordering as last published; thread: any */
    @Override
    public int publishedHeldResponses() {
        return (int) HELD_RESPONSES.getOpaque(this);
    }

    /** @return {@link #undrained()} as last published; thread: any */
    @Override
    public boolean publishedUndrained() {
        return (boolean) UNDRAINED.getOpaque(this);
    }

    /**
     * @return the first violated invariant of the class comment, or {@code null}; network thread (or a test)
     */
    @Override
    public String invariantViolation() {
        Slot<Q, S> head = slots.peekFirst();
        if (sendOutstanding && (head == null || head.response == null)) {
            return "a send outstanding without a head response";
        }
        long sum = 0;
        int withResponse = 0;
        for (Slot<Q, S> s : slots) {
            sum += s.bytes;
            withResponse += s.response != null && !(s == head && sendOutstanding) ? 1 : 0;
        }
        if (sum != bytes) {
            return "inflightBytes=" + bytes + " but its slots hold " + sum;
        }
        if (withResponse != heldResponses) {
            return "heldResponses=" + heldResponses + " but " + withResponse + " slots hold a response";
        }
        return null;
    }

    /**
     * @param action called with each request in flight and its response ({@code null} while not ready), oldest first;
     *     for tests and dumps. Network thread.
     */
    @Override
    public void forEach(java.util.function.BiConsumer<Q, S> action) {
        for (Slot<Q, S> s : slots) {
            action.accept(s.request, s.response);
        }
    }

    @Override
    public String toString() {
        return "inflight=" + slots.size() + " bytes=" + bytes + " sendOutstanding=" + sendOutstanding + " held="
                + heldResponses;
    }
}
