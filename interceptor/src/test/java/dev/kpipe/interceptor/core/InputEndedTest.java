// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.io.EOFException;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.Set;
import kafka.network.Processor;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.Selector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Hooks#inputEnded}: a read that threw on a connection the plugin owns is offered to the listener
 * ({@link NetworkEventListener#onInputEnded}), except an authentication failure, which the selector records and
 * closes as stock does. No broker: a processor of {@link FakeBroker} with one channel in its selector.
 */
class InputEndedTest {

    /** Takes every close it is offered, and keeps the processor its rounds name. */
    private static final class Taking implements NetworkEventListener<Object, Object> {
        NetworkProcessor<Object, Object> processor;
        int offered;

        @Override
        public void onProcessorRound(NetworkProcessor<Object, Object> p) {
            processor = p;
        }

        @Override
        public boolean onInputEnded(NetworkProcessor<Object, Object> p, String connectionId, Throwable cause) {
            offered++;
            return true;
        }
    }

    private final Taking listener = new Taking();
    private Metrics metrics;
    private KafkaChannel channel;

    @BeforeEach
    void anOwnedConnection() throws Exception {
        Hooks.activate(new FakeBroker.NoModel(), null, Set.of());
        BrokerHooks hooks = new BrokerHooks("node 1", Set.of("PLAINTEXT"), new HookCounters());
        hooks.claimServices();
        hooks.listener(listener);
        metrics = FakeBroker.metrics(hooks);
        Processor processor = FakeBroker.processor(0, "PLAINTEXT", metrics);
        Hooks.round(processor); // this thread is the processor's network thread from now on
        channel = new KafkaChannel("c-1", null, () -> null, 1024, MemoryPool.NONE, null);
        Field f = Selector.class.getDeclaredField("channels");
        f.setAccessible(true);
        @SuppressWarnings("unchecked")
        Map<String, KafkaChannel> channels = (Map<String, KafkaChannel>) f.get(processor.selector());
        channels.put(channel.id(), channel);
        ((KafkaNetworkProcessor) listener.processor).own(channel.id(), true);
    }

    @AfterEach
    void close() {
        metrics.close();
    }

    @Test
    void anEndOfStreamIsOfferedToTheListener() {
        assertTrue(Hooks.inputEnded(channel, new EOFException()), "taken over: the read answers 0 bytes");
        assertEquals(1, listener.offered);
    }

    @Test
    void anAuthenticationFailureIsNeverOffered() {
        assertFalse(
                Hooks.inputEnded(channel, new SslAuthenticationException("a TLS 1.3 post-handshake failure")),
                "the selector records a failed authentication and closes the channel, as stock");
        assertEquals(0, listener.offered);
    }
}
