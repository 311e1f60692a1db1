package dev.kpipe.interceptor.v4_4;

import net.bytebuddy.asm.Advice;

/** Advice on {@code kafka.server.KafkaApis.handle(Request, RequestLocal)}: the request is dispatched. */
final class KafkaApisAdvice {
    private KafkaApisAdvice() {
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.This Object apis, @Advice.Argument(0) Object request) {
        Hooks44.dispatched(apis, request);
    }
}
