// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.spi.NetworkEventListener;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The static entry points of deferred dispatch (KIP-890 transaction verification): {@link AppendAdvice} and
 * {@link KafkaApisAdvice} call them, and they forward to the active {@link DeferredAppends}, which tells the listener
 * {@code onDispatchDeferred} and, once the append happened, {@code onRequestDispatched}. Each runs in one guard
 * ({@link #guard}), which counts a throwable so that none reaches a broker thread, but for a {@link
 * VirtualMachineError}. Without deferred dispatch (the binding lacks its hook points, or no listener is active) every
 * entry point does nothing and {@link #handleReturned} is always true: dispatch at handle-return, as for every
 * non-transactional request.
 *
 * <p>Threads: as noted per method. Public only because advice is inlined into the broker's classes; not an API.
 */
public final class AppendHooks {

    /**
     * The hand-off of deferred appends (of every broker of the JVM: each deferral carries its broker's signals), or
     * {@code null} when the binding does not report them.
     */
    private static volatile DeferredAppends appends;

    private static volatile RequestModel model;
    /** The APIs whose deferred dispatch the installed hooks report. */
    private static volatile Set<ApiKeys> tracked = Set.of();

    private AppendHooks() {}

    /**
     * Thread: any (install, from {@link Hooks#activate}, before the advice is installed).
     *
     * @param requestModel the line's request model
     * @param deferredDispatch the APIs whose deferred-dispatch hooks are installed
     */
    static void activate(RequestModel requestModel, Set<ApiKeys> deferredDispatch) {
        model = requestModel;
        tracked = Set.copyOf(deferredDispatch);
        appends = deferredDispatch.isEmpty() ? null : new DeferredAppends();
    }

    /**
     * @param broker a broker's hooks
     * @param m the line's request model
     * @return the signals of that broker's deferred appends
     */
    static DeferredAppends.Signals signals(BrokerHooks broker, RequestModel m) {
        return new AppendSignals(broker, m);
    }

    /**
     * Tells a broker's listener (if it still runs) about deferred and completed appends; counts what it throws, so
     * that a listener's fault leaves {@link DeferredAppends}' bookkeeping whole (a {@link VirtualMachineError} goes
     * on).
     */
    private record AppendSignals(BrokerHooks broker, RequestModel m) implements DeferredAppends.Signals {
        @Override
        public void deferred(Object request) {
            signal(request, false);
        }

        @Override
        public void dispatched(Object request) {
            signal(request, true);
        }

        private void signal(Object request, boolean dispatched) {
            try {
                NetworkEventListener<Object, Object> l = broker.listener();
                if (l == null) {
                    return;
                }
                if (dispatched) {
                    l.onRequestDispatched(request, m.contextOf(request));
                } else {
                    l.onDispatchDeferred(request, m.contextOf(request));
                }
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable t) {
                HookCounters.faultOn(broker);
            }
        }
    }

    /**
     * A hook's body on the deferred appends; implementations capture nothing, so that a hook allocates nothing.
     *
     * @param <A> the first argument's type
     * @param <B> the second argument's type
     * @param <R> the answer's type ({@code Void} for none)
     */
    @FunctionalInterface
    interface AppendHook<A, B, R> {
        R run(DeferredAppends appends, A a, B b) throws Throwable;
    }

    /**
     * The guard every hook of deferred dispatch runs in: answers {@code otherwise} while the binding does not report
     * deferred appends, else runs the body. A throwable is counted on the broker whose thread this is ({@link
     * Hooks#threadBroker()}: the hand-off is the JVM's, its threads are each one broker's; on the JVM's fallback where
     * the hooks know no broker of the thread) and answered with {@code otherwise}, but for a {@link
     * VirtualMachineError}, which is rethrown.
     *
     * @return the body's answer, or {@code otherwise}
     */
    private static <A, B, R> R guard(A a, B b, R otherwise, AppendHook<A, B, R> hook) {
        DeferredAppends d = appends;
        if (d == null) {
            return otherwise;
        }
        try {
            return hook.run(d, a, b);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            HookCounters.faultOn(Hooks.threadBroker());
            return otherwise;
        }
    }

    /** {@code KafkaApis.handle} enter. Thread: request handler. */
    public static void handling(Object apis, Object request) {
        guard(apis, request, null, (d, a, r) -> {
            HandlerHooks.HandlerBroker h = HandlerHooks.handler(a);
            d.handling(r, h.listener() == null ? null : h.signals());
            return null;
        });
    }

    /**
     * {@code KafkaApis.handle} exit (from {@link HandlerHooks#dispatched}). Thread: request handler.
     *
     * @return true if the request is dispatched now (also without deferred dispatch, or on a fault); false if its
     *     append is deferred and the dispatch is signalled later, when the append happened
     */
    static boolean handleReturned(Object request) {
        return guard(request, null, Boolean.TRUE, (d, r, b) -> d.handleReturned(r));
    }

    /**
     * {@code Processor.updateRequestMetrics} enter (from {@link Hooks#completed}): forgets a deferral whose completion
     * the hooks missed ({@link DeferredAppends#responseSent}). Thread: network.
     *
     * @param response the broker's response
     */
    static void responseSent(Object response) {
        guard(response, null, null, (d, r, b) -> {
            if (d.anyPending()) {
                d.responseSent(model.requestOf(r));
            }
            return null;
        });
    }

    /**
     * {@code AddPartitionsToTxnManager.addOrVerifyTransaction} (or {@code verifyTransaction}) enter: on a handler
     * inside {@code KafkaApis.handle} of a request whose API's deferred dispatch the hooks report (PRODUCE,
     * TXN_OFFSET_COMMIT), its order-defining write is deferred. Thread: any.
     */
    public static void verificationStarted() {
        guard(null, null, null, (d, a, b) -> {
            d.verificationStarted(AppendHooks::isTracked);
            return null;
        });
    }

    private static boolean isTracked(Object request) {
        return tracked.contains(model.contextOf(request).header.apiKey());
    }

    /**
     * {@code ReplicaManager.maybeSendPartitionToTransactionCoordinator} ({@code
     * maybeStartTransactionVerificationForPartition} up to 3.9) enter: the callback a caller (the group coordinator's
     * partition writer) gives the verification of one partition. Thread: a request handler.
     *
     * @param callback the callback ({@code scala.Function1})
     */
    public static void partitionVerification(Object callback) {
        guard(callback, null, null, (d, c, b) -> {
            d.partitionVerification(c);
            return null;
        });
    }

    /**
     * {@code ReplicaManager.generalizedCallback$1} exit: a partition verification's callback returned; for the group
     * coordinator runtime it enqueued the transactional write. Thread: any.
     *
     * @param callback the callback it invoked
     */
    public static void verificationCallbackReturned(Object callback) {
        guard(callback, null, null, (d, c, b) -> {
            d.verificationCallbackReturned(c);
            return null;
        });
    }

    /** {@code addOrVerifyTransaction} threw. Thread: any. */
    public static void verificationThrew() {
        guard(null, null, null, (d, a, b) -> {
            d.verificationThrew();
            return null;
        });
    }

    /** {@code KafkaRequestHandler$.$anonfun$wrapAsyncCallback$2} enter. Thread: any. */
    public static void callbackInvoked(Object request) {
        guard(request, null, null, (d, r, b) -> {
            d.callbackInvoked(r);
            return null;
        });
    }

    /**
     * The request's {@code callbackRequestCompleteTimeNanos} setter exit; only a present time ({@code Some},
     * {@code OptionalLong.of}) means the callback ran (the handler resets it to empty before a second callback).
     * Thread: any.
     */
    public static void callbackCompleted(Object request, Object time) {
        guard(request, time, null, (d, r, t) -> {
            if (isTime(t)) {
                d.callbackCompleted(r);
            }
            return null;
        });
    }

    /**
     * @param time the argument of the {@code callbackRequestCompleteTimeNanos} setter
     * @return true for a present time ({@code Some}, {@code OptionalLong.of}), false for an empty one or anything else
     */
    static boolean isTime(Object time) {
        return time instanceof java.util.OptionalLong l
                ? l.isPresent()
                : time instanceof scala.Option<?> o && o.isDefined();
    }
}
