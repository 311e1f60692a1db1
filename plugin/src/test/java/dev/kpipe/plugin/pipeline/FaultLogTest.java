// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

class FaultLogTest {

    /** One call on the logger: level method and its arguments. */
    private record Call(String level, String format, Object[] args) {}

    /** A logger with every level enabled that records warn/debug calls. */
    private static Logger recording(List<Call> calls) {
        InvocationHandler h = (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("is") && name.endsWith("Enabled")) {
                return true;
            }
            if (name.equals("warn") || name.equals("debug") || name.equals("info") || name.equals("error")) {
                Object[] rest = args.length == 2 && args[1] instanceof Object[] a
                        ? a
                        : java.util.Arrays.copyOfRange(args, 1, args.length);
                calls.add(new Call(name, (String) args[0], rest));
                return null;
            }
            if (method.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            return name.equals("getName") ? "test" : null;
        };
        return (Logger) Proxy.newProxyInstance(FaultLogTest.class.getClassLoader(), new Class<?>[] {Logger.class}, h);
    }

    @Test
    void firstOccurrenceAtWarnThenDebugWithTheCauseKept() {
        List<Call> calls = new ArrayList<>();
        FaultLog log = new FaultLog(recording(calls));
        RuntimeException cause = new IllegalStateException("boom");
        for (int i = 0; i < 1000; i++) {
            log.fault("kpipe: failed to admit a request on {}; it is handled as exclusive", "conn-" + i, cause);
        }
        assertEquals(1000, calls.size());
        assertEquals("warn", calls.get(0).level());
        assertTrue(
                calls.get(0).format().contains("further occurrences are logged at DEBUG"),
                calls.get(0).format());
        assertEquals("conn-0", calls.get(0).args()[0]);
        assertSame(cause, calls.get(0).args()[1], "the cause stays the last argument (logged as a throwable)");
        for (Call c : calls.subList(1, calls.size())) {
            assertEquals("debug", c.level());
            assertSame(cause, c.args()[1]);
        }
    }

    @Test
    void eachKindWarnsOnceOfItsOwn() {
        List<Call> calls = new ArrayList<>();
        Logger logger = recording(calls);
        FaultLog a = new FaultLog(logger);
        FaultLog b = new FaultLog(logger);
        a.fault("a {}", 1);
        a.fault("a {}", 2);
        b.fault("b {}", 1);
        assertEquals(
                List.of("warn", "debug", "warn"),
                calls.stream().map(Call::level).toList());
    }

    @Test
    void concurrentFaultsWarnExactlyOnce() throws Exception {
        List<Call> calls = Collections.synchronizedList(new ArrayList<>());
        FaultLog log = new FaultLog(recording(calls));
        int threads = 8;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < 500; i++) {
                    log.fault("f {}", i);
                }
            });
            th.start();
            ts.add(th);
        }
        start.countDown();
        for (Thread th : ts) {
            th.join();
        }
        assertEquals(threads * 500, calls.size());
        assertEquals(1, calls.stream().filter(c -> c.level().equals("warn")).count());
    }
}
