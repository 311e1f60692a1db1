// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.plugin.classify.PipelinedApi;

/**
 * One request read on a pipelined connection, in arrival order, and its response once ready. The slot owns the
 * request's permit of the byte budget ({@link #bytes}, charged when the request was read) and gives it back exactly
 * once ({@link #releasePermit}): when its response is written, or when its connection closes. Slots are reused by
 * their connection ({@link InflightRequests#add}), so a request costs no allocation in steady state. Network
 * thread only.
 */
final class Slot<Q, S> {
    /** The request; {@code null} while the slot is free. */
    Q request;
    /**
     * The request's size, bytes, which is also its permit of the byte budget: set to 0 when the permit is given back
     * ({@link #releasePermit}), so that a slot costs no field more than before and cannot give it back twice. Read it
     * only while the slot is in its connection's list.
     */
    int bytes;
    /** When the request was read (the coordinator's clock, ns): the age the connection dump shows. */
    long readNanos;
    /** The response, once the processor dequeued it; {@code null} before. */
    S response;
    /** The request's row of the table of pipelined APIs. */
    PipelinedApi api;

    /**
     * Takes the slot for a request just read (a new slot, or one its connection reuses: {@link
     * InflightRequests#add}).
     *
     * @param request the request
     * @param bytes its size, bytes, charged on the budget: the permit
     * @param readNanos when it was read
     * @param api its row of the table of pipelined APIs
     * @return this slot
     */
    Slot<Q, S> fill(Q request, int bytes, long readNanos, PipelinedApi api) {
        this.request = request;
        this.bytes = bytes;
        this.readNanos = readNanos;
        this.response = null;
        this.api = api;
        return this;
    }

    /**
     * Gives the request's bytes back to the budget, the first time only.
     *
     * @param budget the budget that charged them
     */
    void releasePermit(ByteBudget budget) {
        int permit = bytes;
        if (permit > 0) {
            bytes = 0;
            budget.release(permit);
        }
    }
}
