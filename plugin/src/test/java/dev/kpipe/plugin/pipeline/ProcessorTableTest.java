// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.NetworkProcessor;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;

/** {@link ProcessorTable}: each processor object its own state, found by id, and an id reused replaces the old one. */
class ProcessorTableTest {

    @Test
    void aProcessorKeepsItsStateAndAnotherWithTheSameIdGetsItsOwn() {
        ProcessorTable<Object, Object> table = new ProcessorTable<>();
        NetworkProcessor<Object, Object> a = processor("PLAINTEXT", 3);
        assertNull(table.peek(a), "nothing before first use");
        ProcessorPipelines<Object, Object> pa = table.of(a);
        assertSame(pa, table.of(a));
        assertSame(pa, table.peek(a));
        assertSame(a, pa.processor());

        NetworkProcessor<Object, Object> low = processor("PLAINTEXT", 0);
        assertSame(low, table.of(low).processor(), "a lower id after a higher one");
        assertSame(pa, table.peek(a));

        NetworkProcessor<Object, Object> other = processor("SASL_PLAINTEXT", 3);
        ProcessorPipelines<Object, Object> po = table.of(other);
        assertNotSame(pa, po, "same id on another listener: its own state");
        assertSame(pa, table.peek(a));

        NetworkProcessor<Object, Object> again = processor("PLAINTEXT", 3);
        ProcessorPipelines<Object, Object> pn = table.of(again);
        assertNotSame(pa, pn, "a new processor with a known id is never given the old one's state");
        assertNull(table.peek(a), "the old processor of that listener and id is gone");
        assertSame(po, table.peek(other));
        assertSame(pn, table.peek(again));
    }

    @Test
    void aLookUpOfAKnownProcessorAllocatesNothing() {
        ProcessorTable<Object, Object> table = new ProcessorTable<>();
        TopicPressureTest.Processor processor = new TopicPressureTest.Processor();
        ProcessorPipelines<Object, Object> p = table.of(processor);
        int calls = 100_000;
        int found = 0;
        for (int i = 0; i < calls; i++) { // warm-up
            found += table.of(processor) == p ? 1 : 0;
        }
        long before = allocatedBytes();
        for (int i = 0; i < calls; i++) {
            found += table.of(processor) == p ? 1 : 0;
        }
        long allocated = allocatedBytes() - before;
        assertTrue(found == 2 * calls, "every look-up found the processor's state");
        assertTrue(allocated < 1024, () -> allocated + " bytes for " + calls + " look-ups");
    }

    /** @return the bytes this thread allocated so far (HotSpot) */
    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @SuppressWarnings("unchecked") // a proxy of the SPI interface
    private static NetworkProcessor<Object, Object> processor(String listener, int id) {
        return (NetworkProcessor<Object, Object>) Proxy.newProxyInstance(
                NetworkProcessor.class.getClassLoader(), new Class<?>[] {NetworkProcessor.class}, (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "id":
                            return id;
                        case "listenerName":
                            return listener;
                        case "hashCode":
                            return System.identityHashCode(proxy);
                        case "equals":
                            return proxy == args[0];
                        case "toString":
                            return listener + "-" + id;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }
}
