// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.spi.ResponseKind;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingDeque;
import kafka.network.Processor;
import kafka.network.RequestChannel;
import kafka.server.KafkaApis;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The broker objects a hook finds its broker's listener from, without a broker: a {@code kafka.network.Processor} and
 * a {@code kafka.server.KafkaApis} allocated without their constructors (which want a whole broker), with only the
 * fields the hooks read set ({@link Brokers}, {@link KafkaNetworkProcessor}), and a metrics registry holding a kpipe
 * reporter.
 */
final class FakeBroker {

    private FakeBroker() {}

    /** A kpipe reporter giving its broker's hooks; counts how often it was told a newer one took over. */
    static class Owner implements MetricsReporter, BrokerHooks.Owner {
        final BrokerHooks hooks;
        int superseded;

        Owner(BrokerHooks hooks) {
            this.hooks = hooks;
        }

        @Override
        public BrokerHooks brokerHooks() {
            return hooks;
        }

        @Override
        public void superseded() {
            superseded++;
        }

        @Override
        public void init(List<KafkaMetric> metrics) {}

        @Override
        public void metricChange(KafkaMetric metric) {}

        @Override
        public void metricRemoval(KafkaMetric metric) {}

        @Override
        public void close() {}

        @Override
        public void configure(Map<String, ?> configs) {}
    }

    /** A request model that knows no request: no context, no processor (-1). */
    static final class NoModel implements RequestModel {
        @Override
        public int processorOf(Object request) {
            return -1;
        }

        @Override
        public RequestContext contextOf(Object request) {
            return null;
        }

        @Override
        public AbstractRequest bodyOf(Object request) {
            return null;
        }

        @Override
        public int sizeInBytesOf(Object request) {
            return 0;
        }

        @Override
        public void sendRequest(RequestChannel channel, Object request) {}

        @Override
        public Object requestOf(Object response) {
            return null;
        }

        @Override
        public ResponseKind kindOf(Object response) {
            return ResponseKind.SEND;
        }

        @Override
        public void markDequeued(Object response, long nanoTime) {}

        @Override
        public void discard(Object response) {}
    }

    /** @return a registry whose kpipe reporter gives these hooks */
    static Metrics metrics(BrokerHooks hooks) {
        Metrics metrics = new Metrics();
        metrics.addReporter(new Owner(hooks));
        return metrics;
    }

    /** @return a {@code KafkaApis} of which only {@code metrics} is set */
    static KafkaApis apis(Metrics metrics) throws Exception {
        KafkaApis apis = allocate(KafkaApis.class);
        set(apis, "metrics", metrics);
        return apis;
    }

    /**
     * @return a {@code Processor} of which only its id, listener, metrics, response queue and selector are set; the
     *     selector has no channel and no completed receive ({@link #completedReceive})
     */
    static Processor processor(int id, String listener, Metrics metrics) throws Exception {
        Processor p = allocate(Processor.class);
        set(p, "id", id);
        set(p, "listenerName", new ListenerName(listener));
        set(p, "metrics", metrics);
        set(p, "responseQueue", new LinkedBlockingDeque<>());
        Selector selector = allocate(Selector.class);
        set(selector, "channels", new HashMap<String, KafkaChannel>());
        set(selector, "closingChannels", new HashMap<String, KafkaChannel>());
        set(selector, "completedReceives", new LinkedHashMap<String, NetworkReceive>());
        set(p, "selector", selector);
        return p;
    }

    /**
     * Puts a request its selector read in the last poll of a connection it has no channel of (closed in that poll).
     *
     * @param processor a processor of {@link #processor}
     * @param connectionId the connection
     */
    @SuppressWarnings("unchecked")
    static void completedReceive(Processor processor, String connectionId) throws Exception {
        Field f = Selector.class.getDeclaredField("completedReceives");
        f.setAccessible(true);
        ((Map<String, NetworkReceive>) f.get(processor.selector()))
                .put(connectionId, new NetworkReceive(connectionId, ByteBuffer.allocate(0)));
    }

    private static <T> T allocate(Class<T> type) throws Exception {
        Field theUnsafe = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        Object unsafe = theUnsafe.get(null);
        return type.cast(
                unsafe.getClass().getMethod("allocateInstance", Class.class).invoke(unsafe, type));
    }

    private static void set(Object target, String field, Object value) throws Exception {
        Field f = target.getClass().getDeclaredField(field);
        f.setAccessible(true);
        f.set(target, value);
    }
}
