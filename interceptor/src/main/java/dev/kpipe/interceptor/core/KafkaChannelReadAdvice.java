// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;

/**
 * Advice on {@code org.apache.kafka.common.network.KafkaChannel.read()} (the same on Kafka 3.8 to 4.4): when the read
 * throws (end of stream, a refused frame, a failed read) on a connection whose close the plugin takes over, the
 * throwable is dropped and the read answers 0 bytes, so that {@code Selector.pollSelectionKeys} does not close the
 * channel. On a normal return it does nothing but a null check.
 */
final class KafkaChannelReadAdvice {
    private KafkaChannelReadAdvice() {}

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(
            @Advice.This Object channel,
            @Advice.Thrown(readOnly = false) Throwable thrown,
            @Advice.Return(readOnly = false) long bytes) {
        if (thrown != null && Hooks.inputEnded(channel, thrown)) {
            thrown = null;
            bytes = 0L;
        }
    }
}
