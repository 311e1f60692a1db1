// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static dev.kpipe.interceptor.core.HookFaultsTest.onNewThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.util.Set;
import kafka.network.Processor;
import kafka.server.KafkaApis;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two brokers in one JVM count apart: a hook's caught throwable and its dropped receives go to the counters of the
 * broker whose processor or request handler it ran for, never to the other's; only a hook that could not find its
 * broker counts on the JVM's fallback ({@link Interceptor#unattributedHookFaults()}).
 */
class BrokerCountersTest {

    /** A listener that throws on a round and on a dispatch while told to. */
    private static final class Faulty implements NetworkEventListener<Object, Object> {
        volatile boolean throwing;

        @Override
        public void onProcessorRound(NetworkProcessor<Object, Object> processor) {
            fail();
        }

        @Override
        public void onRequestDispatched(Object request, RequestContext context) {
            fail();
        }

        private void fail() {
            if (throwing) {
                throw new IllegalStateException("a listener's bug");
            }
        }
    }

    /** One broker as the hooks see it: its hooks, its registry with kpipe's reporter, a processor and a handler. */
    private record Broker(BrokerHooks hooks, Faulty listener, Metrics metrics, Processor processor, KafkaApis apis) {
        static Broker of(String name) throws Exception {
            BrokerHooks hooks = new BrokerHooks(name, Set.of("PLAINTEXT"), new HookCounters());
            hooks.claimServices(); // no services to publish (no binding)
            Faulty listener = new Faulty();
            hooks.listener(listener);
            Metrics metrics = FakeBroker.metrics(hooks);
            return new Broker(
                    hooks, listener, metrics, FakeBroker.processor(0, "PLAINTEXT", metrics), FakeBroker.apis(metrics));
        }

        long faults() {
            return hooks.counters().faults();
        }
    }

    private Broker one;
    private Broker two;
    private long unattributed;

    @BeforeEach
    void twoBrokers() throws Exception {
        Hooks.activate(new FakeBroker.NoModel(), null, Set.of());
        one = Broker.of("node 1");
        two = Broker.of("node 2");
        unattributed = Interceptor.unattributedHookFaults();
    }

    @AfterEach
    void close() {
        one.metrics.close();
        two.metrics.close();
    }

    @Test
    void aNetworkHooksFaultIsCountedOnItsBrokerOnly() {
        one.listener.throwing = true;
        Hooks.round(one.processor);
        Hooks.round(two.processor);
        Hooks.round(one.processor);

        assertEquals(2, one.faults());
        assertEquals(0, two.faults(), "broker 1's faults are not broker 2's");
        assertEquals(unattributed, Interceptor.unattributedHookFaults());
    }

    @Test
    void aRequestHandlersHookFaultIsCountedOnItsBrokerOnly() {
        two.listener.throwing = true;
        Object request = new Object();
        HandlerHooks.dispatched(two.apis, request);
        HandlerHooks.dispatched(one.apis, request);

        assertEquals(1, two.faults());
        assertEquals(0, one.faults(), "broker 2's faults are not broker 1's");
        assertEquals(unattributed, Interceptor.unattributedHookFaults());
    }

    @Test
    void orphanedReceivesAreCountedOnTheBrokerThatDroppedThem() throws Exception {
        FakeBroker.completedReceive(one.processor, "c1");
        FakeBroker.completedReceive(one.processor, "c2");
        Hooks.receives(one.processor);
        Hooks.receives(two.processor);

        assertEquals(2, one.hooks.counters().orphanedReceives());
        assertEquals(0, two.hooks.counters().orphanedReceives());
        assertTrue(one.processor.selector().completedReceives().isEmpty(), "both receives dropped");
    }

    @Test
    void theAdvicesOwnFaultIsCountedOnTheBrokerWhoseThreadRanIt() throws Exception {
        onNewThread(
                () -> { // a network thread of broker 2
                    Hooks.round(two.processor);
                    Hooks.adviceThrew(new IllegalStateException("an advice's bug"));
                });
        onNewThread(
                () -> { // a request handler thread of broker 1
                    HandlerHooks.dispatched(one.apis, new Object());
                    Hooks.adviceThrew(new IllegalStateException("an advice's bug"));
                });

        assertEquals(1, two.faults());
        assertEquals(1, one.faults());
        assertEquals(unattributed, Interceptor.unattributedHookFaults());
    }

    @Test
    void aHookThatCannotFindItsBrokerCountsOnTheJvmsFallback() throws Exception {
        Metrics broken = new Metrics();
        broken.addReporter(new BrokenOwner());
        try {
            Hooks.round(FakeBroker.processor(0, "PLAINTEXT", broken));
        } finally {
            broken.close();
        }

        assertEquals(unattributed + 1, Interceptor.unattributedHookFaults());
        assertEquals(0, one.faults());
        assertEquals(0, two.faults());
    }

    /** A kpipe reporter that fails to give its broker's hooks. */
    private static final class BrokenOwner extends FakeBroker.Owner {
        BrokenOwner() {
            super(null);
        }

        @Override
        public BrokerHooks brokerHooks() {
            throw new IllegalStateException("a reporter's bug");
        }
    }
}
