// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import net.bytebuddy.asm.Advice;

/**
 * Advice on the members that tell when a verified transactional append (KIP-890) happened; each forwards to
 * {@link AppendHooks} and so to {@link DeferredAppends}. Installed only when the binding's deferred-dispatch hook points
 * exist ({@link KafkaBinding#deferredDispatchMethods()}).
 */
final class AppendAdvice {
    private AppendAdvice() {}

    /** {@code AddPartitionsToTxnManager.addOrVerifyTransaction} ({@code verifyTransaction} up to 3.9). */
    static final class Verification {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            AppendHooks.verificationStarted();
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.Thrown Throwable thrown) {
            if (thrown != null) {
                AppendHooks.verificationThrew();
            }
        }
    }

    /** {@code KafkaRequestHandler$.$anonfun$wrapAsyncCallback$2(request, ...)}: the wrapped callback is invoked. */
    static final class CallbackInvoked {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) Object request) {
            AppendHooks.callbackInvoked(request);
        }
    }

    /**
     * {@code ReplicaManager.maybeSendPartitionToTransactionCoordinator} ({@code
     * maybeStartTransactionVerificationForPartition} up to 3.9): the callback of one partition's verification.
     */
    static final class PartitionVerification {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(5) Object callback) {
            AppendHooks.partitionVerification(callback);
        }
    }

    /** {@code ReplicaManager.generalizedCallback$1(results, callback, partition)}: that callback returned. */
    static final class VerificationCallbackReturned {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.Argument(1) Object callback) {
            AppendHooks.verificationCallbackReturned(callback);
        }
    }

    /** The request's {@code callbackRequestCompleteTimeNanos} setter: its {@code CallbackRequest} has run. */
    static final class CallbackCompleted {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object request, @Advice.Argument(0) Object time) {
            AppendHooks.callbackCompleted(request, time);
        }
    }
}
