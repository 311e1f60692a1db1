// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.NetworkEventListener;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The static entry points of deferred dispatch (KIP-890 transaction verification): {@link AppendAdvice} and
 * {@link KafkaApisAdvice} call them, and they forward to the active {@link DeferredAppends}, which tells the listener
 * {@code onDispatchDeferred} and, once the append happened, {@code onRequestDispatched}. Each swallows (and counts) any
 * throwable so that none reaches a broker thread. Without deferred dispatch (the binding lacks its hook points, or no
 * listener is active) every entry point does nothing and {@link #handleReturned} is always true: dispatch at
 * handle-return, as for every non-transactional request.
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
     * Tells a broker's listener (if it still runs) about deferred and completed appends; swallows (and counts) what it
     * throws.
     */
    private record AppendSignals(BrokerHooks broker, RequestModel m) implements DeferredAppends.Signals {
        @Override
        public void deferred(Object request) {
            try {
                NetworkEventListener<Object, Object> l = broker.listener();
                if (l != null) {
                    l.onDispatchDeferred(request, m.contextOf(request));
                }
            } catch (Throwable t) {
                Interceptor.hookFault();
            }
        }

        @Override
        public void dispatched(Object request) {
            try {
                NetworkEventListener<Object, Object> l = broker.listener();
                if (l != null) {
                    l.onRequestDispatched(request, m.contextOf(request));
                }
            } catch (Throwable t) {
                Interceptor.hookFault();
            }
        }
    }

    /** {@code KafkaApis.handle} enter. Thread: request handler. */
    public static void handling(Object apis, Object request) {
        DeferredAppends a = appends;
        if (a != null) {
            try {
                Hooks.HandlerBinding h = Hooks.handler(apis);
                a.handling(request, h.listener() == null ? null : h.signals());
            } catch (Throwable t) {
                Interceptor.hookFault();
            }
        }
    }

    /**
     * {@code KafkaApis.handle} exit (from {@link Hooks#dispatched}). Thread: request handler.
     *
     * @return true if the request is dispatched now; false if its append is deferred and the dispatch is signalled
     *     later, when the append happened
     */
    static boolean handleReturned(Object request) {
        DeferredAppends a = appends;
        return a == null || a.handleReturned(request);
    }

    /**
     * {@code Processor.updateRequestMetrics} enter (from {@link Hooks#completed}): forgets a deferral whose completion
     * the hooks missed ({@link DeferredAppends#responseSent}). Thread: network.
     *
     * @param response the broker's response
     */
    static void responseSent(Object response) {
        DeferredAppends a = appends;
        if (a != null && a.anyPending()) {
            try {
                a.responseSent(model.requestOf(response));
            } catch (Throwable t) {
                Interceptor.hookFault();
            }
        }
    }

    /**
     * {@code AddPartitionsToTxnManager.addOrVerifyTransaction} (or {@code verifyTransaction}) enter: on a handler
     * inside {@code KafkaApis.handle} of a request whose API's deferred dispatch the hooks report (PRODUCE,
     * TXN_OFFSET_COMMIT), its order-defining write is deferred. Thread: any.
     */
    public static void verificationStarted() {
        DeferredAppends a = appends;
        if (a == null) {
            return;
        }
        try {
            a.verificationStarted(AppendHooks::isTracked);
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
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
        DeferredAppends a = appends;
        if (a == null) {
            return;
        }
        try {
            a.partitionVerification(callback);
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /**
     * {@code ReplicaManager.generalizedCallback$1} exit: a partition verification's callback returned; for the group
     * coordinator runtime it enqueued the transactional write. Thread: any.
     *
     * @param callback the callback it invoked
     */
    public static void verificationCallbackReturned(Object callback) {
        DeferredAppends a = appends;
        if (a == null) {
            return;
        }
        try {
            a.verificationCallbackReturned(callback);
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /** {@code addOrVerifyTransaction} threw. Thread: any. */
    public static void verificationThrew() {
        DeferredAppends a = appends;
        if (a == null) {
            return;
        }
        try {
            a.verificationThrew();
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /** {@code KafkaRequestHandler$.$anonfun$wrapAsyncCallback$2} enter. Thread: any. */
    public static void callbackInvoked(Object request) {
        DeferredAppends a = appends;
        if (a == null) {
            return;
        }
        try {
            a.callbackInvoked(request);
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
    }

    /**
     * The request's {@code callbackRequestCompleteTimeNanos} setter exit; only a present time ({@code Some},
     * {@code OptionalLong.of}) means the callback ran (the handler resets it to empty before a second callback).
     * Thread: any.
     */
    public static void callbackCompleted(Object request, Object time) {
        DeferredAppends a = appends;
        if (a == null) {
            return;
        }
        try {
            if (isTime(time)) {
                a.callbackCompleted(request);
            }
        } catch (Throwable t) {
            Interceptor.hookFault();
        }
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
