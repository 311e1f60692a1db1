// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.NetworkEventListener;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Set;
import kafka.server.KafkaApis;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.Test;

/**
 * A hook swallows (and counts) an ordinary throwable but lets a {@link VirtualMachineError} through to the broker
 * thread: in the hook's guard ({@code KafkaApis.handle}'s exit, {@link HandlerHooks#dispatched}, with a listener that
 * throws), counted on the hook's broker, and in the advice's own exception handler ({@link
 * KafkaBinding#adviceFaults()}), counted on the JVM's fallback on a thread the hooks never ran on. Which broker counts
 * what, with two: {@link BrokerCountersTest}.
 */
class HookFaultsTest {

    /** What the test's listener and advice throw; public, as the advice is inlined into a class of another loader. */
    public static final class Thrower {
        public static volatile Throwable next;

        public static void throwNext() throws Throwable {
            throw next;
        }
    }

    @Test
    void theHandlersHookCountsAnOrdinaryThrowableAndLetsAnOutOfMemoryErrorThrough() throws Exception {
        BrokerHooks broker = new BrokerHooks("node 1", Set.of("PLAINTEXT"), new HookCounters());
        broker.claimServices(); // this test publishes no services (it has no binding)
        broker.listener(new NetworkEventListener<>() {
            @Override
            public void onRequestDispatched(Object request, RequestContext context) {
                Throwable t = Thrower.next;
                if (t instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) t;
            }
        });
        Metrics metrics = FakeBroker.metrics(broker);
        KafkaApis apis = FakeBroker.apis(metrics);
        Hooks.activate(new FakeBroker.NoModel(), null, Set.of());
        Object request = new Object();

        Thrower.next = new IllegalStateException("a listener's bug");
        long unattributed = Interceptor.unattributedHookFaults();
        HandlerHooks.dispatched(apis, request);
        assertEquals(1, broker.counters().faults());

        OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
        Thrower.next = oom;
        assertSame(oom, assertThrows(OutOfMemoryError.class, () -> HandlerHooks.dispatched(apis, request)));
        assertEquals(1, broker.counters().faults());
        assertEquals(unattributed, Interceptor.unattributedHookFaults());
        metrics.close();
    }

    @Test
    void theAdvicesExceptionHandlerCountsAnOrdinaryThrowableAndLetsAnOutOfMemoryErrorThrough() throws Exception {
        onNewThread(
                () -> { // a thread the hooks never ran on: no broker, the JVM's fallback
                    long before = Interceptor.unattributedHookFaults();
                    Hooks.adviceThrew(new IllegalStateException("cannot happen"));
                    assertEquals(before + 1, Interceptor.unattributedHookFaults());
                    OutOfMemoryError oom = new OutOfMemoryError();
                    assertSame(oom, assertThrows(OutOfMemoryError.class, () -> Hooks.adviceThrew(oom)));
                    assertEquals(before + 1, Interceptor.unattributedHookFaults());
                });
    }

    /**
     * Runs a test's body on a new thread (no broker cached by the hooks there), rethrowing what it threw.
     *
     * @param body the body
     */
    static void onNewThread(ThrowingRunnable body) throws Exception {
        Throwable[] thrown = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown[0] = e;
            }
        });
        t.start();
        t.join();
        if (thrown[0] instanceof Exception e) {
            throw e;
        } else if (thrown[0] instanceof Error e) {
            throw e;
        }
    }

    /** A test's body. */
    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Throwable;
    }

    /** A broker method's stand-in. */
    public static class Target {
        public String work() {
            return "done";
        }
    }

    /** Advice that throws what the test says, as a hook would if it did not catch it. */
    public static class ThrowingAdvice {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        public static void enter() throws Throwable {
            Thrower.throwNext();
        }
    }

    @Test
    void installedAdviceSuppressesAnOrdinaryThrowableButNotAnOutOfMemoryError() throws Exception {
        Class<?> advised = new ByteBuddy()
                .redefine(Target.class)
                .visit(Advice.to(ThrowingAdvice.class)
                        .withExceptionHandler(KafkaBinding.adviceFaults())
                        .on(named("work")))
                .make()
                .load(new ClassLoader(getClass().getClassLoader()) {}, ClassLoadingStrategy.Default.CHILD_FIRST)
                .getLoaded();
        Object target = advised.getConstructor().newInstance();
        Method work = advised.getMethod("work");

        onNewThread(() -> {
            Thrower.next = new IllegalStateException("a hook's bug");
            long before = Interceptor.unattributedHookFaults();
            assertEquals("done", work.invoke(target));
            assertEquals(before + 1, Interceptor.unattributedHookFaults());

            OutOfMemoryError oom = new OutOfMemoryError();
            Thrower.next = oom;
            InvocationTargetException thrown = assertThrows(InvocationTargetException.class, () -> work.invoke(target));
            assertSame(oom, thrown.getCause());
            assertEquals(before + 1, Interceptor.unattributedHookFaults());
        });
    }
}
