// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;

/** Advice on {@code kafka.network.RequestChannel.sendRequest(request)}: skipped when the plugin holds the request. */
final class RequestChannelAdvice {
    private RequestChannelAdvice() {}

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static boolean enter(@Advice.This Object channel, @Advice.Argument(0) Object request) {
        return Hooks.requestReceived(channel, request);
    }
}
