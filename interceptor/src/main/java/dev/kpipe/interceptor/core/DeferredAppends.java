// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import java.util.concurrent.ConcurrentHashMap;

/**
 * When a request's order-defining write happened, for requests whose write the broker defers past
 * {@code KafkaApis.handle} (KIP-890 transaction verification: a transactional PRODUCE's append, a TXN_OFFSET_COMMIT's
 * offsets): the two-party hand-off between handle-return and the post-verification callback.
 *
 * <p>The broker's path (3.8 to 4.4, {@code javap}): inside {@code KafkaApis.handle(R)},
 * {@code ReplicaManager.handleProduceAppend} wraps its append callback with {@code KafkaRequestHandler.wrapAsyncCallback}
 * and, for partitions that need verification, calls {@code AddPartitionsToTxnManager.addOrVerifyTransaction}
 * ({@code verifyTransaction} up to 3.9) — {@link #verificationStarted}. The wrapped callback is invoked once, with the
 * final result (after any {@code CONCURRENT_TRANSACTIONS} retries, which run unwrapped): on the thread handling R it
 * runs inline ({@link #callbackInvoked} with {@code inline}), elsewhere it queues a {@code CallbackRequest} for R; a
 * request handler runs that later, and R's {@code callbackRequestCompleteTimeNanos} is set once it has appended (by
 * {@code RequestChannel.sendResponse} if the response went out during the callback, else in the handler's
 * {@code finally}) — {@link #callbackCompleted}. KIP-848's group coordinator runtime (3.8+) verifies a TXN_OFFSET_COMMIT
 * differently: its partition writer passes its own callback to {@code ReplicaManager.maybeSendPartitionToTransactionCoordinator}
 * ({@code maybeStartTransactionVerificationForPartition} up to 3.9) — {@link #partitionVerification}, inside handle,
 * before the verification starts — and that callback, invoked by {@code generalizedCallback$1} on the thread that
 * completes the verification (inline, or the coordinator's send thread), enqueues the write into the runtime before it
 * returns — {@link #verificationCallbackReturned}. {@link #handleReturned} is the other party: whichever of
 * handle-return and the completion comes last signals the dispatch.
 *
 * <p>States of one deferred request ({@link State}), moved only by {@link State#next}:
 * <table>
 *   <caption>Transitions</caption>
 *   <tr><th>from</th><th>event</th><th>to</th><th>signal</th></tr>
 *   <tr><td>VERIFYING</td><td>CALLBACK_INLINE</td><td>APPENDED_INLINE</td><td></td></tr>
 *   <tr><td>VERIFYING</td><td>CALLBACK_QUEUED</td><td>CALLBACK_QUEUED</td><td></td></tr>
 *   <tr><td>VERIFYING</td><td>WRITE_ENQUEUED_INLINE</td><td>APPENDED_INLINE</td><td></td></tr>
 *   <tr><td>VERIFYING</td><td>WRITE_ENQUEUED</td><td>CALLBACK_DONE</td><td></td></tr>
 *   <tr><td>VERIFYING</td><td>VERIFICATION_THREW</td><td>DONE</td><td>(handle-return dispatches)</td></tr>
 *   <tr><td>VERIFYING</td><td>HANDLE_RETURNED</td><td>DEFERRED</td><td>deferred</td></tr>
 *   <tr><td>APPENDED_INLINE</td><td>HANDLE_RETURNED</td><td>DONE</td><td>dispatched</td></tr>
 *   <tr><td>CALLBACK_QUEUED</td><td>CALLBACK_COMPLETED</td><td>CALLBACK_DONE</td><td></td></tr>
 *   <tr><td>CALLBACK_QUEUED</td><td>HANDLE_RETURNED</td><td>DEFERRED_QUEUED</td><td>deferred</td></tr>
 *   <tr><td>CALLBACK_DONE</td><td>HANDLE_RETURNED</td><td>DONE</td><td>dispatched</td></tr>
 *   <tr><td>DEFERRED</td><td>CALLBACK_QUEUED</td><td>DEFERRED_QUEUED</td><td></td></tr>
 *   <tr><td>DEFERRED</td><td>WRITE_ENQUEUED</td><td>DONE</td><td>dispatched</td></tr>
 *   <tr><td>DEFERRED_QUEUED</td><td>CALLBACK_COMPLETED</td><td>DONE</td><td>dispatched</td></tr>
 * </table>
 * Any other event leaves the state as it is (a second completion time, a callback of another kind for the same
 * request: on the classic group coordinator the verification callback is {@code wrapAsyncCallback}'s wrapper, so
 * {@code WRITE_ENQUEUED} comes after {@code CALLBACK_QUEUED} or {@code CALLBACK_INLINE} and is ignored). So {@code dispatched} is signalled exactly once per request, after both its handle-return and its append,
 * and {@code deferred}, if at all, before it: the deferred signal is given under the request's lock, which the
 * completing party takes before signalling.
 *
 * <p>Threads: {@link #handling}, {@link #verificationStarted}, {@link #verificationThrew} and {@link #handleReturned} on
 * the request handler thread inside {@code KafkaApis.handle}; {@link #callbackInvoked} on the thread that completes the
 * verification (the coordinator's inter-broker send thread, a scheduler thread, or the handler itself);
 * {@link #callbackCompleted} on a request handler (or whichever thread sends the response); {@link
 * #partitionVerification} on the handler inside handle, {@link #verificationCallbackReturned} on any thread. Lock-free
 * on the path of a request that is not deferred (one thread-local read); a deferred one takes its own monitor.
 */
public final class DeferredAppends {

    /** What the hand-off tells the plugin. Implementations must not block or throw. */
    public interface Signals {
        /**
         * @param request handle returned; its append awaits the callback
         */
        void deferred(Object request);

        /**
         * @param request its append happened (or was refused); the connection may read its next request
         */
        void dispatched(Object request);
    }

    /** One deferred request's state. */
    public enum State {
        /** Inside handle; the verification was sent, its callback not invoked yet. */
        VERIFYING,
        /** Inside handle; the callback ran inline on this thread: the write is done (appended or enqueued). */
        APPENDED_INLINE,
        /** Inside handle; the callback was queued as a {@code CallbackRequest}. */
        CALLBACK_QUEUED,
        /** Inside handle; the {@code CallbackRequest}, or the verification callback, already ran on another thread. */
        CALLBACK_DONE,
        /** Handle returned; the verification is outstanding. */
        DEFERRED,
        /** Handle returned; the {@code CallbackRequest} is queued or running. */
        DEFERRED_QUEUED,
        /** Dispatch signalled (or nothing deferred); forgotten. */
        DONE;

        /**
         * @param e the event
         * @return the next state, or {@code null} if the event does not apply in this state (ignored)
         */
        State next(Event e) {
            return switch (this) {
                case VERIFYING ->
                    switch (e) {
                        case CALLBACK_INLINE, WRITE_ENQUEUED_INLINE -> APPENDED_INLINE;
                        case CALLBACK_QUEUED -> CALLBACK_QUEUED;
                        case WRITE_ENQUEUED -> CALLBACK_DONE;
                        case VERIFICATION_THREW -> DONE;
                        case HANDLE_RETURNED -> DEFERRED;
                        default -> null;
                    };
                case APPENDED_INLINE -> e == Event.HANDLE_RETURNED ? DONE : null;
                case CALLBACK_QUEUED ->
                    switch (e) {
                        case CALLBACK_COMPLETED -> CALLBACK_DONE;
                        case HANDLE_RETURNED -> DEFERRED_QUEUED;
                        default -> null;
                    };
                case CALLBACK_DONE -> e == Event.HANDLE_RETURNED ? DONE : null;
                case DEFERRED ->
                    switch (e) {
                        case CALLBACK_QUEUED -> DEFERRED_QUEUED;
                        case WRITE_ENQUEUED -> DONE;
                        default -> null;
                    };
                case DEFERRED_QUEUED -> e == Event.CALLBACK_COMPLETED ? DONE : null;
                case DONE -> null;
            };
        }
    }

    /** What happened to a deferred request. */
    public enum Event {
        /** The post-verification callback ran on the thread inside handle. */
        CALLBACK_INLINE,
        /** The post-verification callback was re-scheduled as a {@code CallbackRequest}. */
        CALLBACK_QUEUED,
        /** The {@code CallbackRequest} ran: {@code callbackRequestCompleteTimeNanos} was set. */
        CALLBACK_COMPLETED,
        /**
         * The verification callback the group coordinator runtime gave returned on the thread inside handle: its
         * write is enqueued.
         */
        WRITE_ENQUEUED_INLINE,
        /** That callback returned on another thread (the verification answered after handle): the write is enqueued. */
        WRITE_ENQUEUED,
        /** {@code addOrVerifyTransaction} threw: no callback will come. */
        VERIFICATION_THREW,
        /** {@code KafkaApis.handle} returned. */
        HANDLE_RETURNED
    }

    /** A deferred request; its monitor guards {@link #state}. */
    private static final class Deferral {
        final Object request;
        /** The verification callback it is known by ({@link #byCallback}), or {@code null}. */
        final Object callback;
        /** Where its broker hears of it. */
        final Signals signals;

        State state = State.VERIFYING;

        Deferral(Object request, Object callback, Signals signals) {
            this.request = request;
            this.callback = callback;
            this.signals = signals;
        }
    }

    /**
     * The request a handler thread is inside {@code KafkaApis.handle} for, its deferral if any, and the callback of a
     * partition verification it started, if any (until that verification's deferral takes it).
     */
    private static final class Handling {
        Object request;
        /** The signals of the request's broker, or {@code null} if its broker runs without kpipe (nothing deferred). */
        Signals signals;

        Deferral deferral;
        Object callback;
    }

    /** Identity key: the broker's request classes do not override equals, but kpipe does not rely on it. */
    private record Key(Object request) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.request == request;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(request);
        }
    }

    private final ThreadLocal<Handling> handling = ThreadLocal.withInitial(Handling::new);
    private final ConcurrentHashMap<Key, Deferral> pending = new ConcurrentHashMap<>();
    /** Deferrals known by their verification callback ({@link #verificationCallbackReturned}). */
    private final ConcurrentHashMap<Key, Deferral> byCallback = new ConcurrentHashMap<>();

    /** A hand-off for the requests of every broker of the JVM; each request's broker is given at {@link #handling}. */
    public DeferredAppends() {}

    /**
     * {@code KafkaApis.handle(request)} is entered on this thread.
     *
     * @param request the request
     * @param signals where the request's broker hears of its deferral, or {@code null} if it runs without kpipe (the
     *     request is not tracked)
     */
    public void handling(Object request, Signals signals) {
        Handling h = handling.get();
        h.request = request;
        h.signals = signals;
        h.deferral = null;
        h.callback = null;
    }

    /**
     * {@code maybeSendPartitionToTransactionCoordinator} is entered on this thread with {@code callback}: if a
     * verification starts next inside the same handle, its deferral is known by that callback.
     *
     * @param callback the callback the verification is given
     */
    public void partitionVerification(Object callback) {
        Handling h = handling.get();
        if (h.request != null) {
            h.callback = callback;
        }
    }

    /**
     * A partition verification's callback returned on this thread: the write it enqueued is the order-defining step
     * of the deferral it is known by, if any.
     *
     * @param callback the callback
     */
    public void verificationCallbackReturned(Object callback) {
        if (byCallback.isEmpty()) {
            return;
        }
        Deferral d = byCallback.remove(new Key(callback));
        if (d != null) {
            apply(d, handling.get().request == d.request ? Event.WRITE_ENQUEUED_INLINE : Event.WRITE_ENQUEUED);
        }
    }

    /**
     * {@code addOrVerifyTransaction} is entered on this thread: if this thread is inside handle for a request, that
     * request's append is deferred until its callback has run. Outside handle (a {@code CONCURRENT_TRANSACTIONS} retry
     * on a scheduler thread) nothing changes.
     *
     * @param tracked whether the request being handled is of an API whose deferred dispatch the hooks report
     * @return true if a deferral was started
     */
    public boolean verificationStarted(java.util.function.Predicate<Object> tracked) {
        Handling h = handling.get();
        if (h.request == null || h.signals == null || h.deferral != null || !tracked.test(h.request)) {
            return false;
        }
        Deferral d = new Deferral(h.request, h.callback, h.signals);
        h.deferral = d;
        pending.put(new Key(h.request), d);
        if (h.callback != null) {
            byCallback.put(new Key(h.callback), d);
            h.callback = null;
        }
        return true;
    }

    /** {@code addOrVerifyTransaction} threw on this thread: its callback will not come. */
    public void verificationThrew() {
        Deferral d = handling.get().deferral;
        if (d != null) {
            apply(d, Event.VERIFICATION_THREW);
        }
    }

    /**
     * The wrapped post-verification callback of {@code request} was invoked on this thread.
     *
     * @param request the request whose callback it is ({@code wrapAsyncCallback}'s captured request)
     */
    public void callbackInvoked(Object request) {
        if (pending.isEmpty()) {
            return;
        }
        Deferral d = pending.get(new Key(request));
        if (d != null) {
            apply(d, handling.get().request == request ? Event.CALLBACK_INLINE : Event.CALLBACK_QUEUED);
        }
    }

    /**
     * {@code callbackRequestCompleteTimeNanos} of {@code request} was set to a time: its callback has run.
     *
     * @param request the request
     */
    public void callbackCompleted(Object request) {
        if (pending.isEmpty()) {
            return;
        }
        Deferral d = pending.get(new Key(request));
        if (d != null) {
            apply(d, Event.CALLBACK_COMPLETED);
        }
    }

    /**
     * {@code KafkaApis.handle(request)} returned on this thread.
     *
     * @param request the request
     * @return true if the caller signals the dispatch now (nothing deferred, or the append already happened); false if
     *     it was deferred ({@link Signals#deferred} was called) or a nested handle of another request returned
     */
    public boolean handleReturned(Object request) {
        Handling h = handling.get();
        if (h.request != request) {
            return true;
        }
        Deferral d = h.deferral;
        h.request = null;
        h.signals = null;
        h.deferral = null;
        h.callback = null;
        if (d == null) {
            return true;
        }
        return apply(d, Event.HANDLE_RETURNED) == State.DONE;
    }

    /**
     * Applies an event; signals deferred (under the lock) or dispatched (after it) as the table says.
     *
     * @return the state after the event
     */
    private State apply(Deferral d, Event e) {
        State to;
        boolean dispatchNow;
        synchronized (d) {
            State from = d.state;
            to = from.next(e);
            if (to == null) {
                return from;
            }
            d.state = to;
            if (e == Event.HANDLE_RETURNED && to != State.DONE) {
                d.signals.deferred(d.request);
            }
            dispatchNow = to == State.DONE && (e == Event.CALLBACK_COMPLETED || e == Event.WRITE_ENQUEUED);
        }
        if (to == State.DONE) {
            forget(d);
        }
        if (dispatchNow) {
            d.signals.dispatched(d.request);
        }
        return to;
    }

    /**
     * The request's response completed on its network thread ({@code Processor.updateRequestMetrics}): the broker
     * answers a produce only after its append, so a deferral still pending then is one whose completion the hooks
     * missed; it is forgotten without a signal (the plugin ends the connection's wait on the written response itself),
     * so nothing keeps the request. Thread: a network thread. Lock-free while nothing is deferred.
     *
     * @param request the request the response answers
     */
    public void responseSent(Object request) {
        if (pending.isEmpty()) {
            return;
        }
        Deferral d = pending.get(new Key(request));
        if (d != null) {
            synchronized (d) {
                d.state = State.DONE;
            }
            forget(d);
        }
    }

    /** Forgets a deferral that is done: its entries in {@link #pending} and {@link #byCallback}, if still there. */
    private void forget(Deferral d) {
        pending.remove(new Key(d.request), d);
        if (d.callback != null) {
            byCallback.remove(new Key(d.callback), d);
        }
    }

    /** @return whether any deferral is pending; thread: any, lock-free */
    public boolean anyPending() {
        return !pending.isEmpty();
    }

    /**
     * @return deferred requests whose dispatch is not signalled yet, and verification callbacks not returned yet (a
     *     leak check); thread: any
     */
    public int pending() {
        return pending.size() + byCallback.size();
    }
}
