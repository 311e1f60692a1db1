// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.spi.Reauthentication;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.function.Supplier;
import org.apache.kafka.common.network.Authenticator;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.NetworkReceive;

/**
 * A server-side SASL re-authentication (KIP-368) the plugin took over: the channel, the {@code SASL_HANDSHAKE} it
 * read, and the processor's clock, which is what {@code Processor.processCompletedReceives} passes to {@code
 * KafkaChannel.maybeBeginServerReauthentication}. Immutable; used on the processor's network thread.
 *
 * @param channel the broker's channel of the connection
 * @param handshake the received {@code SASL_HANDSHAKE}, payload not yet consumed
 * @param clock the processor's {@code time.nanoseconds()}
 */
record PendingReauthentication(KafkaChannel channel, NetworkReceive handshake, Supplier<Long> clock)
        implements Reauthentication {

    private static final MethodHandle AUTHENTICATOR;
    private static final MethodHandle LAST_REAUTHENTICATION_START_NANOS;
    private static final long MIN_REAUTHENTICATION_INTERVAL_NANOS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(KafkaChannel.class, MethodHandles.lookup());
            AUTHENTICATOR = lookup.findGetter(KafkaChannel.class, "authenticator", Authenticator.class);
            LAST_REAUTHENTICATION_START_NANOS =
                    lookup.findGetter(KafkaChannel.class, "lastReauthenticationStartNanos", long.class);
            MIN_REAUTHENTICATION_INTERVAL_NANOS = (long)
                    lookup.findStaticGetter(KafkaChannel.class, "MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS", long.class)
                            .invoke();
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            throw new ExceptionInInitializerError(t);
        }
    }

    /**
     * Whether {@code KafkaChannel.maybeBeginServerReauthentication} would begin re-authenticating now (and therefore
     * also later: its conditions only depend on the channel's authenticator, which nothing else replaces, and on the
     * time since the previous re-authentication began): the channel is ready, its session has an expiry, and the
     * previous re-authentication, if any, began at least 1 s ago. Otherwise the broker handles the handshake as an
     * ordinary request (its API layer answers it with an error).
     *
     * @param channel the channel
     * @param clock the processor's clock, in nanoseconds
     * @return true if re-authentication would begin
     * @throws Throwable if the channel's private state cannot be read
     */
    static boolean wouldBegin(KafkaChannel channel, Supplier<Long> clock) throws Throwable {
        if (!channel.ready()) {
            return false;
        }
        Authenticator authenticator = (Authenticator) AUTHENTICATOR.invoke(channel);
        if (authenticator.serverSessionExpirationTimeNanos() == null) {
            return false;
        }
        long last = (long) LAST_REAUTHENTICATION_START_NANOS.invoke(channel);
        return last == 0 || clock.get() - last >= MIN_REAUTHENTICATION_INTERVAL_NANOS;
    }
}
