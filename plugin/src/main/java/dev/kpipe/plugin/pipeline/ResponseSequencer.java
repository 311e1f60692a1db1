// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.ResponseKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the responses of each pipelined connection in the order its requests arrived, one at a time, whatever order
 * the request handlers and the purgatory complete them in. Correlation ids are never looked at: the order is the
 * order of the connection's {@link InflightRequests}, which keeps the per-connection bookkeeping; this class is the
 * processor's side of it: the look-up of each response's connection and the processor's ready queue.
 *
 * <p>Invariants (checked by {@link ConnectionInvariants#violation}): at most one send per connection is outstanding,
 * and only for its oldest request; a held response is handed to the broker exactly once, through the processor ({@link
 * ProcessorPipelines#responseReleased}) when the one before it completes, or discarded when its connection closes.
 * Control responses (KIP-219 throttle start/end) bypass the order.
 *
 * <p>A response also ends its request's dispatch phase ({@link DispatchPhase#endByResponse}) when it reaches the
 * network thread before the handler's dispatch signal ({@code KafkaApis.handle}'s exit): the broker answers a request
 * only once it has handled it (a produce after its append), so the next request may be read, and the processor reads it
 * in this round instead of after a wake-up of its own. A deferred transactional write (KIP-890: a produce's append, a
 * TXN_OFFSET_COMMIT's offsets) is left to {@link DeferredDispatch}.
 *
 * <p>Thread: the processor's network thread.
 */
final class ResponseSequencer<Q, S> {

    private static final Logger LOG = LoggerFactory.getLogger(ResponseSequencer.class);

    private final ProcessorTable<Q, S> processors;
    private final ConnectionTable<Q, S> connections;
    private final PipelineStats stats;
    private final ByteBudget budget;

    /**
     * @param connections the connections kpipe owns (the coordinator's table)
     * @param stats where to count faults
     * @param budget the budget whose permits the requests hold
     */
    ResponseSequencer(
            ProcessorTable<Q, S> processors,
            ConnectionTable<Q, S> connections,
            PipelineStats stats,
            ByteBudget budget) {
        this.processors = processors;
        this.connections = connections;
        this.stats = stats;
        this.budget = budget;
    }

    /**
     * {@code Processor.processNewResponses} dequeued a response: returns the response the broker may process now,
     * which is this one, a response released earlier, or the next of the broker's queue if this one is held.
     *
     * @param processor the processor
     * @param response the response dequeued, or {@code null} if the broker's queue was empty
     * @return the response to process, or {@code null} for none
     */
    S dequeued(NetworkProcessor<Q, S> processor, S response) {
        ProcessorPipelines<Q, S> p = processors.of(processor);
        if (connections.isEmpty() && p.noneReady()) {
            return response;
        }
        S r = response;
        while (true) {
            if (r == null) {
                r = p.pollReady();
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
            } catch (VirtualMachineError e) {
                lost(processor, r);
                throw e;
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

    /**
     * A response taken from the queues goes nowhere once an error of the JVM leaves {@link #dequeued}: its connection
     * closes, as Kafka's {@code Processor.processChannelException} closes a channel whose response failed, instead of
     * holding every later response of the connection behind it.
     */
    private static <Q, S> void lost(NetworkProcessor<Q, S> processor, S response) {
        try {
            processor.close(processor.contextOf(processor.requestOf(response)).connectionId);
        } catch (RuntimeException e) {
            LOG.error("kpipe: cannot close the connection of a response lost to an error of the JVM", e);
        }
    }

    /** @return true if the broker may process the response now; false if it is held for ordering */
    private boolean deliverNow(NetworkProcessor<Q, S> processor, S response) {
        Q request = processor.requestOf(response);
        ConnectionPipeline<Q, S> conn = connections.get(processor.contextOf(request).connectionId);
        if (conn == null) {
            return true;
        }
        ResponseKind kind = processor.kindOf(response);
        if (kind.isControl()) {
            return true;
        }
        // answered before the handler's dispatch signal, it ends the dispatch phase (see the class comment)
        InflightRequests.Placement placement = conn.responseReady(request, response);
        return placement != InflightRequests.Placement.HELD;
    }

    /**
     * The broker finished writing a response: its request leaves the connection, gives its budget permit back, and
     * the next response, if ready, is released to the processor ({@link ProcessorPipelines#responseReleased}).
     *
     * @param processor the processor
     * @param response the response written
     * @return the connection to evaluate again, or {@code null} if the response was not one kpipe ordered
     */
    ConnectionPipeline<Q, S> completed(NetworkProcessor<Q, S> processor, S response) {
        Q request = processor.requestOf(response);
        ConnectionPipeline<Q, S> conn = connections.get(processor.contextOf(request).connectionId);
        return conn != null && conn.responseWritten(response, budget) ? conn : null;
    }
}
