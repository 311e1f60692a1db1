package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;

/** Advice on {@code kafka.server.KafkaApis.handle(request, RequestLocal)}: the request is dispatched. Thread: handler. */
final class KafkaApisAdvice {
    private KafkaApisAdvice() {
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.This Object apis, @Advice.Argument(0) Object request) {
        Hooks.dispatched(apis, request);
    }
}
