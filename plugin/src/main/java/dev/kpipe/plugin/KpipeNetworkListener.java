// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import java.util.Map;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * kpipe on a broker that calls the SPI itself (Apache Kafka with kpipe's reference patch, docs/kip.md, Proposed
 * Changes item 1): named in the broker's {@value #BROKER_SETTING}, created, {@linkplain #configure configured} with the
 * broker's whole configuration and {@linkplain #close closed} by the broker's {@code SocketServer}, one instance per
 * broker. It runs this broker's kpipe ({@link KpipePlugin} with no advice: nothing is installed in the JVM) and passes
 * the events of the processors of kpipe's listeners ({@code kpipe.listeners}) to it; a {@code KpipePlugin} also named
 * in {@code metric.reporters} then stays out.
 *
 * <p>Threads: as {@link NetworkEventListener}'s. Not reconfigurable at runtime: the broker does not hand the listener
 * its dynamic configuration.
 */
public final class KpipeNetworkListener implements NetworkEventListener<Object, Object> {

    /** The broker setting of the reference patch that names the listener class. */
    public static final String BROKER_SETTING = "network.event.listener.class";

    private final KpipePlugin plugin = new KpipePlugin(false, true);

    /** Kafka creates it from {@value #BROKER_SETTING}. */
    public KpipeNetworkListener() {}

    /**
     * Thread: the broker's start-up thread, before any event.
     *
     * @param configs the broker's configuration ({@code kpipe.*} as with {@code metric.reporters})
     * @throws org.apache.kafka.common.config.ConfigException if a {@code kpipe.*} value is invalid
     */
    @Override
    public void configure(Map<String, ?> configs) {
        plugin.configure(configs);
    }

    /** @return this broker's kpipe; thread: any */
    public KpipePlugin plugin() {
        return plugin;
    }

    /** @return the listener of kpipe for the processors of this listener name, or {@code null}; thread: any */
    private NetworkEventListener<Object, Object> to(String listenerName) {
        BrokerHooks hooks = plugin.brokerHooks();
        return hooks == null || !hooks.pipelines(listenerName) ? null : plugin.events();
    }

    private NetworkEventListener<Object, Object> to(NetworkProcessor<Object, Object> processor) {
        return to(processor.listenerName());
    }

    @Override
    public void onInstalled(BrokerCapabilities capabilities) {
        NetworkEventListener<Object, Object> l = plugin.events();
        if (l != null) {
            l.onInstalled(capabilities);
        }
    }

    @Override
    public void onBrokerServices(BrokerServices services) {
        NetworkEventListener<Object, Object> l = plugin.events();
        if (l != null) {
            l.onBrokerServices(services);
        }
    }

    @Override
    public void onProcessorRound(NetworkProcessor<Object, Object> processor) {
        NetworkEventListener<Object, Object> l = to(processor);
        if (l != null) {
            l.onProcessorRound(processor);
        }
    }

    @Override
    public Admission onRequestRead(
            NetworkProcessor<Object, Object> processor,
            Object request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        NetworkEventListener<Object, Object> l = to(processor);
        return l == null ? Admission.CLASSIC : l.onRequestRead(processor, request, context, body, sizeInBytes);
    }

    @Override
    public void onRequestDispatched(Object request, RequestContext context) {
        NetworkEventListener<Object, Object> l = to(context.listenerName.value());
        if (l != null) {
            l.onRequestDispatched(request, context);
        }
    }

    @Override
    public void onDispatchDeferred(Object request, RequestContext context) {
        NetworkEventListener<Object, Object> l = to(context.listenerName.value());
        if (l != null) {
            l.onDispatchDeferred(request, context);
        }
    }

    @Override
    public Object onResponseReady(NetworkProcessor<Object, Object> processor, Object response) {
        NetworkEventListener<Object, Object> l = to(processor);
        return l == null ? response : l.onResponseReady(processor, response);
    }

    @Override
    public void onResponseWritten(NetworkProcessor<Object, Object> processor, Object response) {
        NetworkEventListener<Object, Object> l = to(processor);
        if (l != null) {
            l.onResponseWritten(processor, response);
        }
    }

    @Override
    public void onThrottleStarted(NetworkProcessor<Object, Object> processor, String connectionId) {
        NetworkEventListener<Object, Object> l = to(processor);
        if (l != null) {
            l.onThrottleStarted(processor, connectionId);
        }
    }

    @Override
    public void onThrottleEnded(NetworkProcessor<Object, Object> processor, String connectionId) {
        NetworkEventListener<Object, Object> l = to(processor);
        if (l != null) {
            l.onThrottleEnded(processor, connectionId);
        }
    }

    @Override
    public boolean onUnmute(NetworkProcessor<Object, Object> processor, String connectionId) {
        NetworkEventListener<Object, Object> l = to(processor);
        return l != null && l.onUnmute(processor, connectionId);
    }

    @Override
    public boolean onReauthentication(
            NetworkProcessor<Object, Object> processor, String connectionId, Reauthentication reauthentication) {
        NetworkEventListener<Object, Object> l = to(processor);
        return l != null && l.onReauthentication(processor, connectionId, reauthentication);
    }

    @Override
    public boolean onRequestRejected(NetworkProcessor<Object, Object> processor, String connectionId) {
        NetworkEventListener<Object, Object> l = to(processor);
        return l != null && l.onRequestRejected(processor, connectionId);
    }

    @Override
    public boolean onInputEnded(NetworkProcessor<Object, Object> processor, String connectionId, Throwable cause) {
        NetworkEventListener<Object, Object> l = to(processor);
        return l != null && l.onInputEnded(processor, connectionId, cause);
    }

    @Override
    public void onConnectionClosed(NetworkProcessor<Object, Object> processor, String connectionId) {
        NetworkEventListener<Object, Object> l = to(processor);
        if (l != null) {
            l.onConnectionClosed(processor, connectionId);
        }
    }

    /** With the broker's socket server. */
    @Override
    public void close() {
        plugin.close();
    }
}
