// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/** Advice on {@code kafka.network.Processor}; each method forwards to {@link Hooks}. */
final class ProcessorAdvice {
    private ProcessorAdvice() {}

    /** {@code processNewResponses()}: a round starts and ends. */
    static final class Round {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object processor) {
            Hooks.round(processor);
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object processor) {
            Hooks.round(processor);
        }
    }

    /** {@code dequeueResponse()}: the plugin picks the response to process. */
    static final class Dequeue {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(
                @Advice.This Object processor,
                @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object response) {
            response = Hooks.dequeued(processor, response);
        }
    }

    /** {@code updateRequestMetrics(Response)}: a response is complete. */
    static final class Completed {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object processor, @Advice.Argument(0) Object response) {
            Hooks.completed(processor, response);
        }
    }

    /** {@code handleChannelMuteEvent(String, ChannelMuteEvent)}: skipped when the plugin consumes it. */
    static final class MuteEventHook {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
        static boolean enter(
                @Advice.This Object processor,
                @Advice.Argument(0) String connectionId,
                @Advice.Argument(1) Object event) {
            return Hooks.muteEvent(processor, connectionId, event);
        }
    }

    /** {@code tryUnmuteChannel(String)}: skipped when the plugin consumes it. */
    static final class TryUnmute {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
        static boolean enter(@Advice.This Object processor, @Advice.Argument(0) String connectionId) {
            return Hooks.tryUnmute(processor, connectionId);
        }
    }

    /** {@code close(String)}: the broker closes a connection; skipped when the plugin takes the close over. */
    static final class Close {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
        static boolean enter(@Advice.This Object processor, @Advice.Argument(0) String connectionId) {
            return Hooks.closed(processor, connectionId);
        }
    }

    /** {@code processCompletedReceives()}: the requests read in this poll are about to be processed. */
    static final class Receives {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object processor) {
            Hooks.receives(processor);
        }
    }

    /** {@code processDisconnected()}: connections the selector found closed. */
    static final class Disconnected {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object processor) {
            Hooks.disconnected(processor);
        }
    }
}
