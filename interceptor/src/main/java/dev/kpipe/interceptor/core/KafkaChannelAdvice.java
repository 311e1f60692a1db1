// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;

/**
 * Advice on {@code org.apache.kafka.common.network.KafkaChannel.maybeBeginServerReauthentication(NetworkReceive,
 * Supplier)}: skipped, answering true (re-authentication begun), when the plugin takes the re-authentication over.
 */
final class KafkaChannelAdvice {
    private KafkaChannelAdvice() {}

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static boolean enter(
            @Advice.This Object channel, @Advice.Argument(0) Object handshake, @Advice.Argument(1) Object clock) {
        return Hooks.reauthentication(channel, handshake, clock);
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    static void exit(@Advice.Enter boolean deferred, @Advice.Return(readOnly = false) boolean begun) {
        if (deferred) {
            begun = true;
        }
    }
}
