// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;

/**
 * Advice on {@code kafka.server.KafkaApis.handle(request, RequestLocal)}: the handler starts on the request (for
 * {@link DeferredAppends}), and the request is dispatched unless its append was deferred. Thread: handler.
 */
final class KafkaApisAdvice {
    private KafkaApisAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object apis, @Advice.Argument(0) Object request) {
        AppendHooks.handling(apis, request);
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.This Object apis, @Advice.Argument(0) Object request) {
        HandlerHooks.dispatched(apis, request);
    }
}
