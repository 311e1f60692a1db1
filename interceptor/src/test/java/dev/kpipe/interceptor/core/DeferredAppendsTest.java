// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The two-party hand-off of deferred appends (KIP-890): handle-return and the post-verification callback, in both
 * orders, inline, failed, and racing on two threads. The broker's threads are played by this test's threads: the
 * handler thread is the one that calls {@link DeferredAppends#handling}, the coordinator's send thread and the handler
 * that runs the {@code CallbackRequest} are other threads.
 */
class DeferredAppendsTest {

    private final List<String> signals = Collections.synchronizedList(new ArrayList<>());
    private final DeferredAppends.Signals broker = new DeferredAppends.Signals() {
        @Override
        public void deferred(Object request) {
            signals.add("deferred " + request);
        }

        @Override
        public void dispatched(Object request) {
            signals.add("dispatched " + request);
        }
    };
    private final DeferredAppends appends = new DeferredAppends();
    private final ExecutorService other = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        other.shutdownNow();
    }

    private void onOtherThread(Runnable r) throws Exception {
        CompletableFuture.runAsync(r, other).get(10, TimeUnit.SECONDS);
    }

    /** What {@code HandlerHooks.dispatched} does at handle-return. */
    private void handleReturns(Object request) {
        if (appends.handleReturned(request)) {
            signals.add("dispatched " + request);
        }
    }

    @Test
    void eachDeferralSignalsItsOwnBroker() throws Exception {
        List<String> other = Collections.synchronizedList(new ArrayList<>());
        DeferredAppends.Signals otherBroker = new DeferredAppends.Signals() {
            @Override
            public void deferred(Object request) {
                other.add("deferred " + request);
            }

            @Override
            public void dispatched(Object request) {
                other.add("dispatched " + request);
            }
        };
        appends.handling("a", broker);
        appends.verificationStarted(r -> true);
        handleReturns("a");
        appends.handling("b", otherBroker);
        appends.verificationStarted(r -> true);
        handleReturns("b");
        onOtherThread(() -> {
            appends.callbackInvoked("b");
            appends.callbackCompleted("b");
            appends.callbackInvoked("a");
            appends.callbackCompleted("a");
        });
        assertEquals(List.of("deferred a", "dispatched a"), signals);
        assertEquals(List.of("deferred b", "dispatched b"), other);
        assertEquals(0, appends.pending());
    }

    @Test
    void aRequestOfABrokerWithoutKpipeIsNeverDeferred() {
        appends.handling("classic", null);
        assertFalse(appends.verificationStarted(r -> true));
        handleReturns("classic");
        assertEquals(List.of("dispatched classic"), signals);
        assertEquals(0, appends.pending());
    }

    @Test
    void aProduceWithoutVerificationIsDispatchedAtHandleReturn() {
        appends.handling("r1", broker);
        handleReturns("r1");
        assertEquals(List.of("dispatched r1"), signals);
        assertEquals(0, appends.pending());
    }

    @Test
    void handleReturnsFirstThenTheCallbackRunsOnAnotherHandler() throws Exception {
        appends.handling("r1", broker);
        assertTrue(appends.verificationStarted(r -> true));
        handleReturns("r1");
        assertEquals(List.of("deferred r1"), signals);
        onOtherThread(() -> appends.callbackInvoked("r1")); // the coordinator answered: a CallbackRequest is queued
        assertEquals(List.of("deferred r1"), signals);
        onOtherThread(() -> appends.callbackCompleted("r1")); // a handler ran it
        assertEquals(List.of("deferred r1", "dispatched r1"), signals);
        appends.callbackCompleted("r1"); // a second completion time: ignored
        assertEquals(2, signals.size());
        assertEquals(0, appends.pending());
    }

    @Test
    void theCallbackRunsBeforeHandleReturnsThenHandleReturnDispatches() throws Exception {
        appends.handling("r1", broker);
        assertTrue(appends.verificationStarted(r -> true));
        onOtherThread(() -> {
            appends.callbackInvoked("r1");
            appends.callbackCompleted("r1");
        });
        assertEquals(List.of(), signals);
        handleReturns("r1");
        assertEquals(List.of("dispatched r1"), signals);
        assertEquals(0, appends.pending());
    }

    /** COORDINATOR_NOT_AVAILABLE or a lower epoch: the manager calls back at once, on the handler, inline. */
    @Test
    void aCallbackRunInlineInsideHandleDispatchesAtHandleReturn() {
        appends.handling("r1", broker);
        assertTrue(appends.verificationStarted(r -> true));
        appends.callbackInvoked("r1");
        handleReturns("r1");
        assertEquals(List.of("dispatched r1"), signals);
        assertEquals(0, appends.pending());
    }

    /** A fenced producer, a moved coordinator, CONCURRENT_TRANSACTIONS retries exhausted: the callback answers. */
    @Test
    void aFailedVerificationDispatchesWhenItsCallbackHasAnswered() throws Exception {
        appends.handling("r1", broker);
        appends.verificationStarted(r -> true);
        handleReturns("r1");
        // the callback of an error result is invoked, queued and run like a successful one; the setter in the
        // handler's finally runs even when the callback threw
        onOtherThread(() -> appends.callbackInvoked("r1"));
        onOtherThread(() -> appends.callbackCompleted("r1"));
        assertEquals(List.of("deferred r1", "dispatched r1"), signals);
    }

    @Test
    void aVerificationThatThrowsLeavesTheDispatchToHandleReturn() {
        appends.handling("r1", broker);
        appends.verificationStarted(r -> true);
        appends.verificationThrew();
        handleReturns("r1");
        assertEquals(List.of("dispatched r1"), signals);
        assertEquals(0, appends.pending());
    }

    @Test
    void aCompletionTimeBeforeTheCallbackWasQueuedIsIgnored() throws Exception {
        appends.handling("r1", broker);
        appends.verificationStarted(r -> true);
        handleReturns("r1");
        onOtherThread(() -> appends.callbackCompleted("r1"));
        assertEquals(List.of("deferred r1"), signals);
        onOtherThread(() -> appends.callbackInvoked("r1"));
        onOtherThread(() -> appends.callbackCompleted("r1"));
        assertEquals(List.of("deferred r1", "dispatched r1"), signals);
    }

    @Test
    void verificationsOutsideHandleAndOfOtherRequestsAreNotTracked() throws Exception {
        AtomicBoolean started = new AtomicBoolean(true);
        onOtherThread(() -> started.set(appends.verificationStarted(r -> true))); // a retry on a scheduler thread
        assertFalse(started.get());
        appends.handling("offsets", broker);
        assertFalse(appends.verificationStarted(r -> false)); // a TXN_OFFSET_COMMIT
        handleReturns("offsets");
        appends.callbackInvoked("unknown");
        appends.callbackCompleted("unknown");
        assertEquals(List.of("dispatched offsets"), signals);
        assertEquals(0, appends.pending());
    }

    @Test
    void onlyAPresentTimeCompletesACallback() {
        assertTrue(AppendHooks.isTime(OptionalLong.of(5)));
        assertFalse(AppendHooks.isTime(OptionalLong.empty()));
        assertTrue(AppendHooks.isTime(scala.Option.apply(5L)));
        assertFalse(AppendHooks.isTime(scala.Option.empty()));
        assertFalse(AppendHooks.isTime(null));
    }

    /**
     * Handle-return and the callback race on two threads, 2000 times: the dispatch is signalled exactly once, only
     * after both parties arrived, and a deferred signal, if any, comes before it.
     */
    @Test
    void theTwoPartiesRaceAndTheLastOneDispatchesExactlyOnce() throws Exception {
        int rounds = 2000;
        ExecutorService callbackThread = Executors.newSingleThreadExecutor();
        AtomicInteger violations = new AtomicInteger();
        try {
            for (int i = 0; i < rounds; i++) {
                String request = "r" + i;
                AtomicBoolean handleArrived = new AtomicBoolean();
                AtomicBoolean callbackArrived = new AtomicBoolean();
                AtomicInteger dispatched = new AtomicInteger();
                AtomicBoolean deferred = new AtomicBoolean();
                DeferredAppends.Signals check = new DeferredAppends.Signals() {
                    @Override
                    public void deferred(Object r) {
                        if (dispatched.get() != 0) {
                            violations.incrementAndGet();
                        }
                        deferred.set(true);
                    }

                    @Override
                    public void dispatched(Object r) {
                        if (!handleArrived.get() || !callbackArrived.get() || dispatched.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                        }
                    }
                };
                DeferredAppends a = new DeferredAppends();
                CyclicBarrier barrier = new CyclicBarrier(2);
                a.handling(request, check);
                a.verificationStarted(r -> true);
                CompletableFuture<Void> callback = CompletableFuture.runAsync(
                        () -> {
                            await(barrier);
                            a.callbackInvoked(request);
                            callbackArrived.set(true);
                            a.callbackCompleted(request);
                        },
                        callbackThread);
                await(barrier);
                handleArrived.set(true);
                if (a.handleReturned(request)) {
                    check.dispatched(request);
                }
                callback.get(10, TimeUnit.SECONDS);
                assertEquals(1, dispatched.get(), request);
                assertEquals(0, a.pending(), request);
            }
        } finally {
            callbackThread.shutdownNow();
        }
        assertEquals(0, violations.get());
    }

    // ------------------------------------------------------------------ the group coordinator runtime (KIP-848)

    /**
     * A TXN_OFFSET_COMMIT on the coordinator runtime: its partition writer gives its own callback to the verification
     * ({@code maybeSendPartitionToTransactionCoordinator}); handle returns; the coordinator's send thread runs that
     * callback, which enqueues the write: dispatched when it returns.
     */
    @Test
    void handleReturnsFirstThenTheVerificationCallbackEnqueuesTheWriteOnAnotherThread() throws Exception {
        Object callback = new Object();
        appends.handling("c1", broker);
        appends.partitionVerification(callback);
        assertTrue(appends.verificationStarted(r -> true));
        handleReturns("c1");
        assertEquals(List.of("deferred c1"), signals);
        onOtherThread(() -> appends.verificationCallbackReturned(callback));
        assertEquals(List.of("deferred c1", "dispatched c1"), signals);
        onOtherThread(() -> appends.verificationCallbackReturned(callback)); // no second signal
        assertEquals(2, signals.size());
        assertEquals(0, appends.pending());
    }

    @Test
    void theVerificationCallbackReturnsBeforeHandleReturnsThenHandleReturnDispatches() throws Exception {
        Object callback = new Object();
        appends.handling("c1", broker);
        appends.partitionVerification(callback);
        appends.verificationStarted(r -> true);
        onOtherThread(() -> appends.verificationCallbackReturned(callback));
        assertEquals(List.of(), signals, "nothing before handle returned");
        handleReturns("c1");
        assertEquals(List.of("dispatched c1"), signals);
        assertEquals(0, appends.pending());
    }

    /** The verification answered at once on the handler (no coordinator known): inline, dispatched at handle-return. */
    @Test
    void aVerificationCallbackRunInlineDispatchesAtHandleReturn() {
        Object callback = new Object();
        appends.handling("c1", broker);
        appends.partitionVerification(callback);
        appends.verificationStarted(r -> true);
        appends.verificationCallbackReturned(callback);
        handleReturns("c1");
        assertEquals(List.of("dispatched c1"), signals);
        assertEquals(0, appends.pending());
    }

    /**
     * The classic coordinator (3.8–3.9) gives {@code wrapAsyncCallback}'s wrapper as the callback: the wrapper queues a
     * {@code CallbackRequest} inside the callback, so its return ends nothing; the {@code CallbackRequest} does.
     */
    @Test
    void aWrappedCallbackReturningEndsNothingItsCallbackRequestDoes() throws Exception {
        Object wrapper = new Object();
        appends.handling("c1", broker);
        appends.partitionVerification(wrapper);
        appends.verificationStarted(r -> true);
        handleReturns("c1");
        onOtherThread(() -> {
            appends.callbackInvoked("c1"); // the wrapper re-schedules the append as a CallbackRequest
            appends.verificationCallbackReturned(wrapper);
        });
        assertEquals(List.of("deferred c1"), signals, "queued, not written");
        onOtherThread(() -> appends.callbackCompleted("c1"));
        assertEquals(List.of("deferred c1", "dispatched c1"), signals);
        assertEquals(0, appends.pending());
    }

    /** A verification the broker did not need (the partition already verified) leaves nothing behind. */
    @Test
    void aPartitionVerificationThatNeverVerifiesLeavesNothingBehind() {
        Object callback = new Object();
        appends.handling("c1", broker);
        appends.partitionVerification(callback);
        appends.verificationCallbackReturned(callback); // inline: no verification was sent
        handleReturns("c1");
        assertEquals(List.of("dispatched c1"), signals);
        assertEquals(0, appends.pending());
        appends.handling("c2", broker);
        assertTrue(appends.verificationStarted(r -> true), "a later verification of another request");
        handleReturns("c2");
        assertEquals(List.of("dispatched c1", "deferred c2"), signals, "not known by c1's callback");
        assertEquals(1, appends.pending());
        appends.responseSent("c2");
        assertEquals(0, appends.pending());
    }

    /** Handle-return and the verification callback race on two threads: exactly one dispatch, after both. */
    @Test
    void handleReturnAndTheVerificationCallbackRaceAndTheLastOneDispatchesExactlyOnce() throws Exception {
        int rounds = 2000;
        ExecutorService sendThread = Executors.newSingleThreadExecutor();
        AtomicInteger violations = new AtomicInteger();
        try {
            for (int i = 0; i < rounds; i++) {
                String request = "c" + i;
                Object callbackObject = new Object();
                AtomicBoolean handleArrived = new AtomicBoolean();
                AtomicBoolean callbackArrived = new AtomicBoolean();
                AtomicInteger dispatched = new AtomicInteger();
                DeferredAppends.Signals check = new DeferredAppends.Signals() {
                    @Override
                    public void deferred(Object r) {
                        if (dispatched.get() != 0) {
                            violations.incrementAndGet();
                        }
                    }

                    @Override
                    public void dispatched(Object r) {
                        if (!handleArrived.get() || !callbackArrived.get() || dispatched.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                        }
                    }
                };
                DeferredAppends a = new DeferredAppends();
                CyclicBarrier barrier = new CyclicBarrier(2);
                a.handling(request, check);
                a.partitionVerification(callbackObject);
                a.verificationStarted(r -> true);
                CompletableFuture<Void> callback = CompletableFuture.runAsync(
                        () -> {
                            await(barrier);
                            callbackArrived.set(true); // the write is enqueued inside the callback, before it returns
                            a.verificationCallbackReturned(callbackObject);
                        },
                        sendThread);
                await(barrier);
                handleArrived.set(true);
                if (a.handleReturned(request)) {
                    check.dispatched(request);
                }
                callback.get(10, TimeUnit.SECONDS);
                assertEquals(1, dispatched.get(), request);
                assertEquals(0, a.pending(), request);
            }
        } finally {
            sendThread.shutdownNow();
        }
        assertEquals(0, violations.get());
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
