// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.lang.management.ManagementFactory;
import java.util.Set;
import kafka.network.Processor;
import kafka.server.KafkaApis;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.Test;

/**
 * The hooks a request passes through allocate nothing per call: their guards and capture-free bodies, with a listener
 * that allocates nothing either. Measured with the thread's allocated bytes (HotSpot), over many calls after a
 * warm-up.
 */
class HookAllocationTest {

    private static final int CALLS = 50_000;

    /** Counts what it is told; allocates nothing. */
    private static final class Counting implements NetworkEventListener<Object, Object> {
        int rounds;
        int ready;
        int written;
        int dispatched;

        @Override
        public void onProcessorRound(NetworkProcessor<Object, Object> processor) {
            rounds++;
        }

        @Override
        public Object onResponseReady(NetworkProcessor<Object, Object> processor, Object response) {
            ready++;
            return response;
        }

        @Override
        public void onResponseWritten(NetworkProcessor<Object, Object> processor, Object response) {
            written++;
        }

        @Override
        public void onRequestDispatched(Object request, RequestContext context) {
            dispatched++;
        }
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    void theHooksOfOneRequestAllocateNothing() throws Exception {
        BrokerHooks broker = new BrokerHooks("node 1", Set.of("PLAINTEXT"), new HookCounters());
        broker.claimServices(); // no services to publish (no binding)
        Counting listener = new Counting();
        broker.listener(listener);
        Metrics metrics = FakeBroker.metrics(broker);
        Processor processor = FakeBroker.processor(0, "PLAINTEXT", metrics);
        KafkaApis apis = FakeBroker.apis(metrics);
        Hooks.activate(new FakeBroker.NoModel(), null, Set.of());
        Object request = new Object();
        Object response = new Object();

        long unattributed = Interceptor.unattributedHookFaults();
        oneRequest(processor, apis, request, response, CALLS); // warm-up
        long before = allocatedBytes();
        oneRequest(processor, apis, request, response, CALLS);
        long allocated = allocatedBytes() - before;

        assertEquals(0, broker.counters().faults());
        assertEquals(unattributed, Interceptor.unattributedHookFaults());
        assertEquals(2 * CALLS, listener.ready);
        assertEquals(2 * CALLS, listener.written);
        assertEquals(2 * CALLS, listener.dispatched);
        assertEquals(4 * CALLS, listener.rounds);
        assertTrue(allocated < 1024, () -> allocated + " bytes for " + CALLS + " requests");
        metrics.close();
    }

    /** The network and handler hooks one produce request passes through, {@code calls} times. */
    private static void oneRequest(Processor processor, KafkaApis apis, Object request, Object response, int calls) {
        for (int i = 0; i < calls; i++) {
            Hooks.round(processor);
            assertFalse(Hooks.requestReceived(null, request)); // another processor's, says the model
            HandlerHooks.dispatched(apis, request);
            assertSame(response, Hooks.dequeued(processor, response));
            assertFalse(Hooks.muteEvent(processor, "c", KafkaChannel.ChannelMuteEvent.RESPONSE_SENT));
            Hooks.completed(processor, response);
            Hooks.round(processor);
        }
    }
}
