// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The dispatch phase of one pipelined connection: the request whose order-defining step has not happened yet (for a
 * produce, its append), during which the connection reads nothing more. Most requests end it when {@code
 * KafkaApis.handle} returns, or when their response reaches the network thread first (the broker answers a request only
 * after handling it); a request whose order-defining step the broker runs after handle returned (a KIP-890 verification
 * of a transactional produce or TXN_OFFSET_COMMIT; its dispatch is deferred) ends it only by that step's signal, or by
 * its written response.
 *
 * <p>Invariant: at most one request per connection is in the phase; it is ended exactly once, by compare-and-set,
 * whichever of the handler's signal, the network thread's dequeue of the response or the written-response fallback
 * comes first, and never a later request's phase.
 *
 * <p>Thread: {@link #start} on the connection's network thread; the rest on any thread (volatile fields,
 * compare-and-set).
 */
final class DispatchPhase {

    /** The request in the phase, or {@code null}. */
    private volatile Object request;
    /** The request whose order-defining step comes after handle ({@link #defer}); meaningful while it is {@link #request}. */
    private volatile Object deferred;

    private static final VarHandle REQUEST;
    private static final VarHandle DEFERRED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            REQUEST = l.findVarHandle(DispatchPhase.class, "request", Object.class);
            DEFERRED = l.findVarHandle(DispatchPhase.class, "deferred", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** @param read the request just read: its phase starts. Network thread. */
    void start(Object read) {
        request = read;
    }

    /** @return the request in the phase, or {@code null} */
    Object request() {
        return request;
    }

    /** @return true if a request is in the phase */
    boolean active() {
        return request != null;
    }

    /** @return true if the request in the phase waits for a deferred order-defining step ({@link #defer}) */
    boolean deferred() {
        Object r = request;
        return r != null && deferred == r;
    }

    /**
     * Ends {@code r}'s phase if it is still the one in it.
     *
     * @param r the broker's request handle
     * @return true if this call ended it
     */
    boolean end(Object r) {
        if (!REQUEST.compareAndSet(this, r, null)) {
            return false;
        }
        DEFERRED.compareAndSet(this, r, null);
        return true;
    }

    /**
     * The request's response reached the network thread: ends its phase unless its order-defining step is deferred.
     *
     * @param r the request the response answers
     * @return true if this call ended the phase
     */
    boolean endByResponse(Object r) {
        return request == r && deferred != r && end(r);
    }

    /**
     * {@code KafkaApis.handle} returned for {@code r} before its order-defining step: the phase lasts until that
     * step is signalled.
     *
     * @param r the broker's request handle
     * @return true if it is the request in the phase (now deferred); false if not (nothing changed)
     */
    boolean defer(Object r) {
        if (request != r) {
            return false;
        }
        deferred = r;
        return true;
    }

    /**
     * @param r a request
     * @return true if it is in the phase with its order-defining step deferred
     */
    boolean deferredFor(Object r) {
        return r != null && request == r && deferred == r;
    }
}
