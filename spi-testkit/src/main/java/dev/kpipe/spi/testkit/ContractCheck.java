// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The SPI's test kit: a listener that passes every event to the plugin's listener unchanged and checks that the broker
 * side reports them as the package documentation promises. Any implementation of the broker side (a broker's
 * network layer, kpipe's bindings of each Kafka line, a test double) runs its traffic through it and must report no
 * violation. Checked, per request (by identity) and per connection id:
 *
 * <ul>
 *   <li>{@code onInstalled} comes once, before every other event;
 *   <li>a request is read once ({@code onRequestRead}), and not on a connection already closed;
 *   <li>{@code onDispatchDeferred} comes at most once, only for an API in {@link BrokerCapabilities#deferredDispatch()},
 *       after the request was read and before it was dispatched;
 *   <li>{@code onRequestDispatched} comes at most once per request, after {@code onDispatchDeferred} returned if that
 *       came;
 *   <li>{@code onConnectionClosed} comes once per connection.
 * </ul>
 *
 * A dispatch of a request never read here (a request of a listener the plugin is not installed on, a forwarded
 * request) is not checked. The order of responses is the plugin's to keep, not the broker side's, and is not checked
 * here. A violation is reported to the sink given at construction, once per violating event, and never thrown: the
 * plugin's listener sees every event as if the check were not there.
 *
 * <p>Memory: per connection, the requests read and not yet dispatched, and the last {@value #REMEMBERED_DISPATCHED}
 * dispatched (to catch a second dispatch); all dropped when the connection closes. The ids of closed connections are
 * kept (a few dozen bytes each): meant for tests, not for production brokers.
 *
 * <p>Thread: any, as the events come (network threads, request handler threads); every method is thread-safe.
 *
 * <p>On a real broker with kpipe: put this kit's jar on the broker's class path beside kpipe's and start the JVM with
 * {@code -Dkpipe.spi.contract.check.class=dev.kpipe.spi.testkit.ContractCheck}; kpipe then makes one with its own
 * listener and a sink that logs each violation at ERROR ({@code kpipe: SPI contract violated: ...}). The integration
 * tests do so on every broker. (kpipe loads it by name through the constructor below: it never depends on this kit.)
 *
 * @param <Q> the broker's request type
 * @param <S> the broker's response type
 */
public final class ContractCheck<Q, S> implements NetworkEventListener<Q, S> {

    /** How many dispatched requests per connection are remembered to catch a second dispatch. */
    public static final int REMEMBERED_DISPATCHED = 1_024;

    private enum Phase {
        READ,
        DEFERRED,
        DISPATCHED
    }

    private final NetworkEventListener<Q, S> delegate;
    private final Consumer<String> violations;
    private final AtomicBoolean installed = new AtomicBoolean();
    private final AtomicLong violationCount = new AtomicLong();
    private final Map<Identity, Phase> requests = new ConcurrentHashMap<>();
    private final Map<String, Connection> connections = new ConcurrentHashMap<>();
    private final Set<String> closed = ConcurrentHashMap.newKeySet();
    private volatile Set<ApiKeys> deferrable = Set.of();

    /**
     * @param delegate the plugin's listener, which gets every event and whose answers are returned
     * @param violations where each violation is reported, as one line naming the event, the connection and the rule;
     *     called on the thread of the violating event, must not block or throw
     */
    public ContractCheck(NetworkEventListener<Q, S> delegate, Consumer<String> violations) {
        this.delegate = delegate;
        this.violations = violations;
    }

    /** @return how many violations were reported since construction */
    public long violations() {
        return violationCount.get();
    }

    /** Passes the broker's configuration on to the plugin's listener. */
    @Override
    public void configure(Map<String, ?> configs) {
        delegate.configure(configs);
    }

    /** Closes the plugin's listener. */
    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public void onInstalled(BrokerCapabilities capabilities) {
        if (!installed.compareAndSet(false, true)) {
            violation("onInstalled came twice");
        }
        deferrable = capabilities.deferredDispatch();
        delegate.onInstalled(capabilities);
    }

    @Override
    public void onBrokerServices(BrokerServices services) {
        requireInstalled("onBrokerServices");
        delegate.onBrokerServices(services);
    }

    @Override
    public void onProcessorRound(NetworkProcessor<Q, S> processor) {
        requireInstalled("onProcessorRound");
        delegate.onProcessorRound(processor);
    }

    @Override
    public Admission onRequestRead(
            NetworkProcessor<Q, S> processor,
            Q request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        requireInstalled("onRequestRead");
        String id = context.connectionId;
        if (closed.contains(id)) {
            violation("onRequestRead of " + context.header.apiKey() + " on connection " + id + " after it closed");
        }
        if (requests.putIfAbsent(new Identity(request), Phase.READ) != null) {
            violation("onRequestRead of " + context.header.apiKey() + " on connection " + id
                    + ": the same request read twice");
        } else {
            connections.computeIfAbsent(id, k -> new Connection()).read(new Identity(request));
        }
        return delegate.onRequestRead(processor, request, context, body, sizeInBytes);
    }

    @Override
    public void onDispatchDeferred(Q request, RequestContext context) {
        ApiKeys api = context.header.apiKey();
        if (!deferrable.contains(api)) {
            violation("onDispatchDeferred of " + api + " on connection " + context.connectionId
                    + ": not an API the broker declared in deferredDispatch " + deferrable);
        }
        Phase[] was = new Phase[1];
        requests.computeIfPresent(new Identity(request), (k, phase) -> {
            was[0] = phase;
            return phase == Phase.READ ? Phase.DEFERRED : phase;
        });
        if (was[0] != null && was[0] != Phase.READ) {
            violation("onDispatchDeferred of " + api + " on connection " + context.connectionId + " after "
                    + (was[0] == Phase.DEFERRED ? "an earlier onDispatchDeferred" : "its dispatch"));
        }
        delegate.onDispatchDeferred(request, context);
    }

    @Override
    public void onRequestDispatched(Q request, RequestContext context) {
        Identity key = new Identity(request);
        Phase[] was = new Phase[1];
        requests.computeIfPresent(key, (k, phase) -> {
            was[0] = phase;
            return Phase.DISPATCHED;
        });
        if (was[0] == Phase.DISPATCHED) {
            violation("onRequestDispatched of " + context.header.apiKey() + " on connection " + context.connectionId
                    + ": dispatched twice");
        } else if (was[0] != null) {
            Connection c = connections.get(context.connectionId);
            if (c != null) {
                c.dispatched(key, requests);
            }
        }
        delegate.onRequestDispatched(request, context);
    }

    @Override
    public S onResponseReady(NetworkProcessor<Q, S> processor, S response) {
        return delegate.onResponseReady(processor, response);
    }

    @Override
    public void onResponseWritten(NetworkProcessor<Q, S> processor, S response) {
        delegate.onResponseWritten(processor, response);
    }

    @Override
    public void onThrottleStarted(NetworkProcessor<Q, S> processor, String connectionId) {
        delegate.onThrottleStarted(processor, connectionId);
    }

    @Override
    public void onThrottleEnded(NetworkProcessor<Q, S> processor, String connectionId) {
        delegate.onThrottleEnded(processor, connectionId);
    }

    @Override
    public boolean onUnmute(NetworkProcessor<Q, S> processor, String connectionId) {
        return delegate.onUnmute(processor, connectionId);
    }

    @Override
    public boolean onReauthentication(
            NetworkProcessor<Q, S> processor, String connectionId, Reauthentication reauthentication) {
        return delegate.onReauthentication(processor, connectionId, reauthentication);
    }

    @Override
    public boolean onRequestRejected(NetworkProcessor<Q, S> processor, String connectionId) {
        return delegate.onRequestRejected(processor, connectionId);
    }

    @Override
    public boolean onInputEnded(NetworkProcessor<Q, S> processor, String connectionId, Throwable cause) {
        if (closed.contains(connectionId)) {
            violation("onInputEnded of connection " + connectionId + " after it closed");
        }
        return delegate.onInputEnded(processor, connectionId, cause);
    }

    @Override
    public void onConnectionClosed(NetworkProcessor<Q, S> processor, String connectionId) {
        if (!closed.add(connectionId)) {
            violation("onConnectionClosed of connection " + connectionId + " came twice");
        }
        Connection c = connections.remove(connectionId);
        if (c != null) {
            c.forget(requests);
        }
        delegate.onConnectionClosed(processor, connectionId);
    }

    private void requireInstalled(String event) {
        if (!installed.get()) {
            violation(event + " before onInstalled");
        }
    }

    private void violation(String what) {
        violationCount.incrementAndGet();
        try {
            violations.accept(what);
        } catch (RuntimeException e) {
            // the sink's fault: the check never disturbs the events it passes on
        }
    }

    /** A request compared by identity, as the SPI compares the broker's objects. */
    private record Identity(Object request) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Identity other && other.request == request;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(request);
        }
    }

    /** The requests of one connection the check remembers: read and not dispatched, and the last dispatched. */
    private static final class Connection {
        private final Set<Identity> live = ConcurrentHashMap.newKeySet();
        private final ArrayDeque<Identity> dispatched = new ArrayDeque<>();

        void read(Identity request) {
            live.add(request);
        }

        synchronized void dispatched(Identity request, Map<Identity, Phase> requests) {
            live.remove(request);
            dispatched.addLast(request);
            if (dispatched.size() > REMEMBERED_DISPATCHED) {
                requests.remove(dispatched.removeFirst());
            }
        }

        synchronized void forget(Map<Identity, Phase> requests) {
            live.forEach(requests::remove);
            dispatched.forEach(requests::remove);
        }
    }
}
