// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import kafka.server.KafkaApis;

/**
 * The static entry points the inlined advice calls on request handler threads ({@code KafkaApis.handle}), in one
 * guard ({@link #guard}) as {@link Hooks} on network threads: a throwable is counted and the broker's own behaviour
 * proceeds; a {@link VirtualMachineError} goes on to the broker thread.
 *
 * <p>Threads: request handler threads. Each broker's listener is found from the {@code KafkaApis} a hook runs for
 * ({@link Brokers}) and kept per thread. Public only because advice is inlined into the broker's classes; not an API.
 */
public final class HandlerHooks {

    /** The line's request model; published last at install. */
    private static volatile RequestModel model;

    private static volatile KafkaBinding binding;

    /** The broker of the {@code KafkaApis} whose request handler thread this is. */
    private static final ThreadLocal<HandlerBroker> HANDLER = new ThreadLocal<>();

    private HandlerHooks() {}

    /** Thread: any (install, from {@link Hooks#activate}, before the advice is installed). */
    static void activate(RequestModel requestModel, KafkaBinding kafkaBinding) {
        binding = kafkaBinding;
        model = requestModel;
    }

    /** A request handler thread's broker: the hooks of the {@code KafkaApis} it last ran. */
    record HandlerBroker(Object apis, BrokerHooks broker, int generation, DeferredAppends.Signals signals) {
        boolean stale() {
            return generation != Interceptor.brokersGeneration() && (broker == null || broker.listener() == null);
        }

        NetworkEventListener<Object, Object> listener() {
            return broker == null ? null : broker.listener();
        }
    }

    /**
     * Thread: request handler.
     *
     * @param apis the broker's {@code KafkaApis}
     * @return this thread's broker, looked up again if it ran another {@code KafkaApis} or is stale
     */
    static HandlerBroker handler(Object apis) {
        HandlerBroker h = HANDLER.get();
        if (h == null || h.apis != apis || h.stale()) {
            int generation = Interceptor.brokersGeneration();
            BrokerHooks broker = Brokers.of((KafkaApis) apis);
            h = new HandlerBroker(apis, broker, generation, broker == null ? null : AppendHooks.signals(broker, model));
            HANDLER.set(h);
        }
        return h;
    }

    /**
     * @return the broker of the {@code KafkaApis} this request handler thread last ran, or {@code null}; thread: any (a
     *     fault's path, {@link Hooks#threadBroker()})
     */
    static BrokerHooks threadBroker() {
        HandlerBroker h = HANDLER.get();
        return h == null ? null : h.broker();
    }

    /**
     * A hook's body on a request handler thread; implementations capture nothing, so that a hook allocates nothing.
     *
     * @param <A> the argument's type
     */
    @FunctionalInterface
    interface HandlerHook<A> {
        void run(HandlerBroker handler, NetworkEventListener<Object, Object> listener, Object apis, A a)
                throws Throwable;
    }

    /**
     * The guard every request handler hook runs in: does nothing until the advice is active, finds the thread's
     * broker, does nothing if it has no listener, else runs the body. A throwable is counted on the thread's broker
     * (on the JVM's fallback if finding it failed: {@link HookCounters#faultOn(BrokerHooks)}), but for a {@link
     * VirtualMachineError}, which is rethrown.
     *
     * @param apis the hooked {@code KafkaApis}
     * @param lookUp whether to look the broker up again if the thread's is another {@code KafkaApis}' or stale; if
     *     false, the body runs only with the thread's broker as it is, and only if it is {@code apis}'
     */
    private static <A> void guard(Object apis, boolean lookUp, A a, HandlerHook<A> hook) {
        if (model == null) {
            return;
        }
        HandlerBroker h = null;
        try {
            h = lookUp ? handler(apis) : HANDLER.get();
            NetworkEventListener<Object, Object> l = h == null || h.apis != apis ? null : h.listener();
            if (l != null) {
                hook.run(h, l, apis, a);
            }
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            HookCounters.faultOn(h != null ? h.broker() : threadBroker());
        }
    }

    /**
     * {@code KafkaApis.handle} exit, normal or exceptional: the request is dispatched, unless its append is deferred
     * ({@link AppendHooks#handleReturned}); then, once per broker, its services are published to the listener (after
     * the dispatch, so that a fault publishing them cannot leave the request undispatched). Thread: request handler.
     */
    public static void dispatched(Object apis, Object request) {
        boolean now = AppendHooks.handleReturned(request); // first: the hand-off forgets the thread's handle either way
        guard(apis, true, now ? request : null, (h, l, a, r) -> {
            if (r != null) { // not deferred
                l.onRequestDispatched(r, model.contextOf(r));
            }
        });
        guard(apis, false, null, (h, l, a, r) -> {
            if (h.broker().claimServices()) {
                KafkaBinding b = binding;
                KafkaApis k = (KafkaApis) a;
                l.onBrokerServices(
                        new BrokerServices(b.topicNames(k), new KafkaBrokerLoad(k, b.delayedProduceRequests(k))));
            }
        });
    }
}
