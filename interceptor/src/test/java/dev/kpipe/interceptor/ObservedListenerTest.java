// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.Test;

/** The deciding listener with observers beside it: who is told what, in which order, and whose answer counts. */
class ObservedListenerTest {

    private final List<String> told = new ArrayList<>();

    /** Records each event it gets under its name and answers the opposite of the default. */
    private NetworkEventListener<Object, Object> listener(String name, boolean throwing) {
        return new NetworkEventListener<>() {
            @Override
            public Admission onRequestRead(
                    NetworkProcessor<Object, Object> p, Object q, RequestContext c, AbstractRequest b, int size) {
                told.add(name + " read " + q);
                fail();
                return Admission.PIPELINED;
            }

            @Override
            public void onRequestDispatched(Object q, RequestContext c) {
                told.add(name + " dispatched " + q);
                fail();
            }

            @Override
            public Object onResponseReady(NetworkProcessor<Object, Object> p, Object s) {
                told.add(name + " ready " + s);
                fail();
                return name + "'s answer";
            }

            @Override
            public boolean onUnmute(NetworkProcessor<Object, Object> p, String id) {
                told.add(name + " unmute " + id);
                fail();
                return true;
            }

            @Override
            public void onConnectionClosed(NetworkProcessor<Object, Object> p, String id) {
                told.add(name + " closed " + id);
                fail();
            }

            private void fail() {
                if (throwing) {
                    throw new IllegalStateException(name + " fails");
                }
            }
        };
    }

    @Test
    void withoutObserversTheDecidingListenerIsUsedAsItIs() {
        NetworkEventListener<Object, Object> deciding = listener("kpipe", false);
        assertSame(deciding, ObservedListener.of(deciding, List.of(), new HookCounters()));
    }

    @Test
    void everyObserverIsToldFirstItsAnswersAreIgnoredAndItsFaultsCountedOnItsBroker() {
        HookCounters broker = new HookCounters();
        NetworkEventListener<Object, Object> events = ObservedListener.of(
                listener("kpipe", false), List.of(listener("timing", false), listener("broken", true)), broker);
        long unattributed = Interceptor.unattributedHookFaults();

        assertEquals(Admission.PIPELINED, events.onRequestRead(null, "q1", null, null, 10));
        events.onRequestDispatched("q1", null);
        assertEquals("kpipe's answer", events.onResponseReady(null, "s1"));
        assertEquals(true, events.onUnmute(null, "c1"));
        events.onConnectionClosed(null, "c1");

        assertEquals(
                List.of(
                        "timing read q1",
                        "broken read q1",
                        "kpipe read q1",
                        "timing dispatched q1",
                        "broken dispatched q1",
                        "kpipe dispatched q1",
                        "timing ready s1",
                        "broken ready s1",
                        "kpipe ready s1",
                        "timing unmute c1",
                        "broken unmute c1",
                        "kpipe unmute c1",
                        "timing closed c1",
                        "broken closed c1",
                        "kpipe closed c1"),
                told);
        assertEquals(5, broker.faults(), "one fault per event of the broken observer");
        assertEquals(unattributed, Interceptor.unattributedHookFaults(), "nothing on the JVM's fallback");
    }

    @Test
    void theObserversAnswersDoNotLeakWhenTheDecidingListenerAnswersTheDefault() {
        NetworkEventListener<Object, Object> events = ObservedListener.of(
                new NetworkEventListener<>() {}, List.of(listener("timing", false)), new HookCounters());
        assertEquals(Admission.CLASSIC, events.onRequestRead(null, "q1", null, null, 10));
        assertEquals("s1", events.onResponseReady(null, "s1"));
        assertEquals(false, events.onUnmute(null, "c1"));
    }

    /** Counts the events of one request's path; allocates nothing. */
    private static final class Counting implements NetworkEventListener<Object, Object> {
        int events;

        @Override
        public Admission onRequestRead(
                NetworkProcessor<Object, Object> p, Object q, RequestContext c, AbstractRequest b, int size) {
            events++;
            return Admission.CLASSIC;
        }

        @Override
        public void onRequestDispatched(Object q, RequestContext c) {
            events++;
        }

        @Override
        public Object onResponseReady(NetworkProcessor<Object, Object> p, Object s) {
            events++;
            return s;
        }

        @Override
        public void onResponseWritten(NetworkProcessor<Object, Object> p, Object s) {
            events++;
        }
    }

    @Test
    void tellingObserversAllocatesNothingOnARequestsPath() {
        Counting kpipe = new Counting();
        Counting first = new Counting();
        Counting second = new Counting();
        NetworkEventListener<Object, Object> events =
                ObservedListener.of(kpipe, List.of(first, second), new HookCounters());
        Object request = new Object();
        Object response = new Object();
        int calls = 50_000;
        oneRequest(events, request, response, calls); // warm-up
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
        oneRequest(events, request, response, calls);
        long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        assertEquals(List.of(8 * calls, 8 * calls, 8 * calls), List.of(kpipe.events, first.events, second.events));
        assertTrue(allocated < 1024, () -> allocated + " bytes for " + calls + " requests");
    }

    private static void oneRequest(
            NetworkEventListener<Object, Object> events, Object request, Object response, int calls) {
        for (int i = 0; i < calls; i++) {
            events.onRequestRead(null, request, null, null, 100);
            events.onRequestDispatched(request, null);
            assertSame(response, events.onResponseReady(null, response));
            events.onResponseWritten(null, response);
        }
    }
}
