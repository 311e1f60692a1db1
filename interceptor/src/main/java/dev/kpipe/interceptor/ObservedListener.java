// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import java.util.List;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * One broker's listeners as the broker side carries them: the deciding listener (kpipe's coordinator), whose answers
 * the broker follows, and observing listeners beside it (but the responses the deciding listener takes itself with
 * {@code NetworkProcessor.pollResponse}, which reach its {@code onResponseReady} only). Each event goes to every
 * observer first, in their configured
 * order, then to the deciding listener, whose answer is returned; an observer's answer is ignored, and a throwable of
 * an observer is caught and counted on its broker's {@link HookCounters} (as a deciding listener's is), the event going
 * on to the next listener. An observer must not call the processor's actions (it owns no connection); {@link
 * NetworkProcessor#wakeup()} and the accessors it may. Thread-safety: that of the listeners; the list is fixed.
 *
 * <p>Lifecycle: {@code configure} and {@code close} are not passed on. Whoever created a listener configures and closes
 * it, once per broker (kpipe's plugin does so for the observers of {@code kpipe.spi.observer.classes}, and its runtime
 * owns the deciding listener).
 */
public final class ObservedListener implements NetworkEventListener<Object, Object> {

    private final NetworkEventListener<Object, Object> deciding;
    private final NetworkEventListener<Object, Object>[] observers;
    /** The broker's counters, where an observer's throwable is counted. */
    private final HookCounters counters;

    @SuppressWarnings("unchecked")
    private ObservedListener(
            NetworkEventListener<Object, Object> deciding,
            List<NetworkEventListener<Object, Object>> observers,
            HookCounters counters) {
        this.deciding = deciding;
        this.observers = observers.toArray(new NetworkEventListener[0]);
        this.counters = counters;
    }

    /**
     * @param deciding the listener whose answers the broker follows
     * @param observers the observing listeners, in the order they are told
     * @param counters the broker's hook counters, where an observer's throwable is counted
     * @return {@code deciding} itself if there are no observers, else both behind one listener
     */
    public static NetworkEventListener<Object, Object> of(
            NetworkEventListener<Object, Object> deciding,
            List<NetworkEventListener<Object, Object>> observers,
            HookCounters counters) {
        return observers.isEmpty() ? deciding : new ObservedListener(deciding, observers, counters);
    }

    /** An event's call on one observer. */
    @FunctionalInterface
    private interface Event<A, B> {
        void tell(NetworkEventListener<Object, Object> observer, A a, B b);
    }

    /** Tells every observer; a throwable is counted and the next observer is told. */
    private <A, B> void observe(A a, B b, Event<A, B> event) {
        for (NetworkEventListener<Object, Object> o : observers) {
            try {
                event.tell(o, a, b);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable t) {
                counters.fault();
            }
        }
    }

    @Override
    public void onInstalled(BrokerCapabilities capabilities) {
        observe(capabilities, null, (o, c, x) -> o.onInstalled(c));
        deciding.onInstalled(capabilities);
    }

    @Override
    public void onBrokerServices(BrokerServices services) {
        observe(services, null, (o, s, x) -> o.onBrokerServices(s));
        deciding.onBrokerServices(services);
    }

    @Override
    public void onProcessorRound(NetworkProcessor<Object, Object> processor) {
        observe(processor, null, (o, p, x) -> o.onProcessorRound(p));
        deciding.onProcessorRound(processor);
    }

    @Override
    public Admission onRequestRead(
            NetworkProcessor<Object, Object> processor,
            Object request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        for (NetworkEventListener<Object, Object> o : observers) { // five arguments: no shared Event shape
            try {
                o.onRequestRead(processor, request, context, body, sizeInBytes);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable t) {
                counters.fault();
            }
        }
        return deciding.onRequestRead(processor, request, context, body, sizeInBytes);
    }

    @Override
    public void onRequestDispatched(Object request, RequestContext context) {
        observe(request, context, NetworkEventListener::onRequestDispatched);
        deciding.onRequestDispatched(request, context);
    }

    @Override
    public void onDispatchDeferred(Object request, RequestContext context) {
        observe(request, context, NetworkEventListener::onDispatchDeferred);
        deciding.onDispatchDeferred(request, context);
    }

    @Override
    public Object onResponseReady(NetworkProcessor<Object, Object> processor, Object response) {
        observe(processor, response, NetworkEventListener::onResponseReady);
        return deciding.onResponseReady(processor, response);
    }

    @Override
    public void onResponseWritten(NetworkProcessor<Object, Object> processor, Object response) {
        observe(processor, response, NetworkEventListener::onResponseWritten);
        deciding.onResponseWritten(processor, response);
    }

    @Override
    public void onThrottleStarted(NetworkProcessor<Object, Object> processor, String connectionId) {
        observe(processor, connectionId, NetworkEventListener::onThrottleStarted);
        deciding.onThrottleStarted(processor, connectionId);
    }

    @Override
    public void onThrottleEnded(NetworkProcessor<Object, Object> processor, String connectionId) {
        observe(processor, connectionId, NetworkEventListener::onThrottleEnded);
        deciding.onThrottleEnded(processor, connectionId);
    }

    @Override
    public boolean onUnmute(NetworkProcessor<Object, Object> processor, String connectionId) {
        observe(processor, connectionId, NetworkEventListener::onUnmute);
        return deciding.onUnmute(processor, connectionId);
    }

    @Override
    public boolean onReauthentication(
            NetworkProcessor<Object, Object> processor, String connectionId, Reauthentication reauthentication) {
        observe(processor, connectionId, (o, p, id) -> o.onReauthentication(p, id, reauthentication));
        return deciding.onReauthentication(processor, connectionId, reauthentication);
    }

    @Override
    public boolean onRequestRejected(NetworkProcessor<Object, Object> processor, String connectionId) {
        observe(processor, connectionId, NetworkEventListener::onRequestRejected);
        return deciding.onRequestRejected(processor, connectionId);
    }

    @Override
    public boolean onInputEnded(NetworkProcessor<Object, Object> processor, String connectionId, Throwable cause) {
        observe(processor, connectionId, (o, p, id) -> o.onInputEnded(p, id, cause));
        return deciding.onInputEnded(processor, connectionId, cause);
    }

    @Override
    public void onConnectionClosed(NetworkProcessor<Object, Object> processor, String connectionId) {
        observe(processor, connectionId, NetworkEventListener::onConnectionClosed);
        deciding.onConnectionClosed(processor, connectionId);
    }
}
