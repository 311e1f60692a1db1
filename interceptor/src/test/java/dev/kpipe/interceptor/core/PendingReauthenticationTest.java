// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.network.Authenticator;
import org.apache.kafka.common.network.ChannelMetadataRegistry;
import org.apache.kafka.common.network.CipherInformation;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.network.TransportLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PendingReauthentication#wouldBegin} against Kafka 4.4's own {@code KafkaChannel}: it must say true exactly
 * when {@code KafkaChannel.maybeBeginServerReauthentication} would begin re-authenticating, since kpipe takes a
 * handshake over only then and begins it later with that very method (no advice is installed in this test).
 */
class PendingReauthenticationTest {

    private static final long SECOND = 1_000_000_000L;

    /** A channel whose transport is ready and whose authenticators report the given state. */
    private static KafkaChannel channel(boolean complete, Long sessionExpiryNanos, AtomicInteger reauthentications) {
        TransportLayer transport = (TransportLayer) Proxy.newProxyInstance(
                TransportLayer.class.getClassLoader(),
                new Class<?>[] {TransportLayer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "ready" -> true;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> null;
                });
        Supplier<Authenticator> authenticators = () -> (Authenticator) Proxy.newProxyInstance(
                Authenticator.class.getClassLoader(),
                new Class<?>[] {Authenticator.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "complete" -> complete;
                    case "serverSessionExpirationTimeNanos" -> sessionExpiryNanos;
                    case "reauthenticate" -> {
                        reauthentications.incrementAndGet();
                        yield null;
                    }
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> null;
                });
        return new KafkaChannel("c-1", transport, authenticators, 1024, MemoryPool.NONE, new ChannelMetadataRegistry() {
            @Override
            public void registerCipherInformation(CipherInformation info) {}

            @Override
            public CipherInformation cipherInformation() {
                return null;
            }

            @Override
            public void registerClientInformation(ClientInformation info) {}

            @Override
            public ClientInformation clientInformation() {
                return null;
            }

            @Override
            public void close() {}
        });
    }

    private static NetworkReceive handshake() {
        return new NetworkReceive("c-1", ByteBuffer.allocate(8));
    }

    @Test
    void aChannelThatIsNotReadyOrHasNoSessionExpiryWouldNotBegin() throws Throwable {
        AtomicInteger n = new AtomicInteger();
        assertFalse(PendingReauthentication.wouldBegin(channel(false, 5L, n), () -> 10L));
        KafkaChannel noExpiry = channel(true, null, n);
        assertFalse(PendingReauthentication.wouldBegin(noExpiry, () -> 10L));
        assertFalse(noExpiry.maybeBeginServerReauthentication(handshake(), () -> 10L), "Kafka agrees");
        assertEquals(0, n.get());
    }

    @Test
    void theFirstReauthenticationWouldBegin() throws Throwable {
        AtomicInteger n = new AtomicInteger();
        KafkaChannel c = channel(true, 5L, n);
        assertTrue(PendingReauthentication.wouldBegin(c, () -> 7 * SECOND));
        assertTrue(c.maybeBeginServerReauthentication(handshake(), () -> 7 * SECOND), "Kafka agrees");
        assertEquals(1, n.get());
    }

    /** After a re-authentication began at 7 s, one that arrives {@code afterMillis} later. */
    @ParameterizedTest
    @ValueSource(longs = {0, 500, 999, 1000, 1001, 5000})
    void aReauthenticationWithinOneSecondOfThePreviousWouldNotBeginAndKafkaAgrees(long afterMillis) throws Throwable {
        AtomicInteger n = new AtomicInteger();
        KafkaChannel c = channel(true, 5L, n);
        assertTrue(c.maybeBeginServerReauthentication(handshake(), () -> 7 * SECOND));
        long now = 7 * SECOND + afterMillis * 1_000_000L;
        boolean would = PendingReauthentication.wouldBegin(c, () -> now);
        assertEquals(afterMillis >= 1000, would);
        assertEquals(would, c.maybeBeginServerReauthentication(handshake(), () -> now), "Kafka agrees");
        // Later is never worse: what would begin now also begins after a drain.
        if (would) {
            KafkaChannel d = channel(true, 5L, n);
            assertTrue(d.maybeBeginServerReauthentication(handshake(), () -> 7 * SECOND));
            assertTrue(PendingReauthentication.wouldBegin(d, () -> now));
            assertTrue(d.maybeBeginServerReauthentication(handshake(), () -> now + 3 * SECOND));
        }
    }
}
