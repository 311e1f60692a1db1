package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.ResponseKind;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the responses of each pipelined connection in the order its requests arrived, one at a time, whatever order
 * the request handlers and the purgatory complete them in. Correlation ids are never looked at: the order is the
 * order of the connection's {@link ConnectionPipeline#slots}.
 *
 * <p>Invariants (checked by {@link ConnectionPipeline#invariantViolation()}): at most one send per connection is
 * outstanding ({@link ConnectionPipeline#sendOutstanding}), and only for the head slot; every other slot with a
 * response is counted in {@link ConnectionPipeline#heldResponses} (and the {@code held-responses} gauge); a held
 * response is handed to the broker exactly once, through {@link ProcessorPipelines#ready} when the one before it
 * completes, or discarded when its connection closes. Control responses (KIP-219 throttle start/end) bypass the
 * order.
 *
 * <p>A response also ends its request's dispatch phase ({@link ConnectionPipeline#endDispatch}) when it reaches the
 * network thread before the handler's dispatch signal ({@code KafkaApis.handle}'s exit): the broker answers a request
 * only once it has handled it (a produce after its append), so the next request may be read, and the processor reads
 * it in this round instead of after a wake-up of its own. A deferred transactional append (KIP-890) is left to
 * {@link DeferredDispatch}.
 *
 * <p>Thread: the processor's network thread.
 */
final class ResponseSequencer {

    private static final Logger LOG = LoggerFactory.getLogger(ResponseSequencer.class);

    private final Map<String, ConnectionPipeline> connections;
    private final PipelineStats stats;
    private final ByteBudget budget;
    private final Ticker ticker;

    /**
     * @param connections the connections kpipe owns, by id (the coordinator's table)
     * @param stats where to count
     * @param budget the budget whose permits the slots hold
     * @param ticker the clock of {@link ConnectionPipeline#lastWrittenNanos}
     */
    ResponseSequencer(
            Map<String, ConnectionPipeline> connections, PipelineStats stats, ByteBudget budget, Ticker ticker) {
        this.connections = connections;
        this.stats = stats;
        this.budget = budget;
        this.ticker = ticker;
    }

    /**
     * {@code Processor.processNewResponses} dequeued a response: returns the response the broker may process now,
     * which is this one, a response released earlier, or the next of the broker's queue if this one is held.
     *
     * @param processor the processor
     * @param response the response dequeued, or {@code null} if the broker's queue was empty
     * @return the response to process, or {@code null} for none
     */
    Object dequeued(NetworkProcessor processor, Object response) {
        ProcessorPipelines p = ProcessorPipelines.of(processor);
        if (connections.isEmpty() && p.ready.isEmpty()) {
            return response;
        }
        Object r = response;
        while (true) {
            if (r == null) {
                r = p.ready.pollFirst();
                if (r == null) {
                    r = processor.pollResponse();
                    if (r == null) {
                        return null;
                    }
                }
            }
            boolean now;
            try {
                now = deliverNow(processor, r);
            } catch (Throwable e) {
                // kpipe cannot place this response: the broker processes it itself, as without kpipe. Responses kpipe
                // already holds stay held and go out in their turn (returning the dequeued one instead would hand a
                // held response over twice and lose this one).
                stats.pluginFaults.increment();
                LOG.warn("kpipe: failed to order a response; the broker processes it as it comes", e);
                return r;
            }
            if (now) {
                return r;
            }
            r = null;
        }
    }

    /** @return true if the broker may process the response now; false if it is held for ordering */
    private boolean deliverNow(NetworkProcessor processor, Object response) {
        Object request = processor.requestOf(response);
        ConnectionPipeline conn = connections.get(processor.contextOf(request).connectionId);
        if (conn == null) {
            return true;
        }
        ResponseKind kind = processor.kindOf(response);
        if (kind.isControl()) {
            return true;
        }
        Slot slot = conn.slotOf(request);
        if (slot == null) {
            return true;
        }
        if (conn.awaitingDispatch == request && conn.awaitingAppend != request && conn.endDispatch(request)) {
            // answered before the handler's dispatch signal: the dispatch phase ends here (see the class comment)
            conn.schedule();
        }
        if (slot.response == response) {
            // released from the ready queue: it is the head and its turn
            return true;
        }
        slot.response = response;
        if (!conn.sendOutstanding && conn.slots.peekFirst() == slot) {
            conn.sendOutstanding = true;
            return true;
        }
        stats.heldResponses.incrementAndGet();
        conn.heldResponses++;
        conn.publish();
        return false;
    }

    /**
     * The broker finished writing a response: its slot leaves the connection, gives its budget permit back, and the
     * next response, if ready, is released to {@link ProcessorPipelines#ready}.
     *
     * @param processor the processor
     * @param response the response written
     * @return the connection to evaluate again, or {@code null} if the response was not one kpipe ordered
     */
    ConnectionPipeline completed(NetworkProcessor processor, Object response) {
        Object request = processor.requestOf(response);
        ConnectionPipeline conn = connections.get(processor.contextOf(request).connectionId);
        if (conn == null) {
            return null;
        }
        Slot head = conn.slots.peekFirst();
        if (head == null || head.response != response) {
            return null;
        }
        conn.slots.pollFirst();
        conn.inflightBytes -= head.bytes;
        head.releasePermit(budget);
        conn.sendOutstanding = false;
        conn.lastWrittenNanos = ticker.nanos();
        stats.inflightRequests.decrementAndGet();
        Slot next = conn.slots.peekFirst();
        if (next != null && next.response != null) {
            conn.sendOutstanding = true;
            stats.heldResponses.decrementAndGet();
            conn.heldResponses--;
            conn.processor.ready.addLast(next.response);
        }
        conn.publish();
        conn.recycle(head);
        conn.processor.lastCompleted = conn;
        return conn;
    }

    /**
     * The connection closed: every response kpipe holds or released for it is discarded, except the one the broker
     * is sending, which the broker completes itself on close.
     *
     * @param conn the closed connection
     * @param processor its processor
     */
    void discard(ConnectionPipeline conn, NetworkProcessor processor) {
        Slot head = conn.slots.peekFirst();
        for (Slot s : conn.slots) {
            if (s.response == null) {
                continue;
            }
            if (conn.processor.ready.removeFirstOccurrence(s.response)) {
                processor.discard(s.response);
            } else if (!(s == head && conn.sendOutstanding)) {
                stats.heldResponses.decrementAndGet();
                processor.discard(s.response);
            }
            // else: the broker holds it in flight and completes it itself on close
        }
    }
}
