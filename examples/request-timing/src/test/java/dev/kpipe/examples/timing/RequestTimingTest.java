// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.testkit.FakeProcessor;
import dev.kpipe.spi.testkit.FakeRequest;
import dev.kpipe.spi.testkit.FakeResponse;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The timing listener driven by the SPI test kit's {@link FakeProcessor}, on a clock the test moves. */
class RequestTimingTest {

    private final FakeTime time = new FakeTime();
    private final RequestTiming<FakeRequest, FakeResponse> timing = new RequestTiming<>(time, List.of());
    private FakeProcessor processor;

    private FakeProcessor configured(Map<String, Object> settings) {
        Map<String, Object> configs = new HashMap<>(settings);
        configs.put("node.id", "1");
        timing.configure(configs);
        processor = new FakeProcessor(timing);
        return processor;
    }

    @AfterEach
    void close() {
        timing.close();
    }

    private double metric(String name, ApiKeys api) {
        return timing.metrics().value(name, api);
    }

    @Test
    void timesReadToDispatchAndDispatchToWritePerApi() throws Exception {
        FakeProcessor p = configured(Map.of());
        FakeRequest produce = p.read("c1", ApiKeys.PRODUCE);
        FakeRequest fetch = p.read("c2", ApiKeys.FETCH);
        time.advanceMs(3);
        p.dispatch(produce);
        time.advanceMs(2);
        p.dispatch(fetch);
        time.advanceMs(5);
        p.respond(produce);
        p.round();
        time.advanceMs(7);
        p.respond(fetch);
        p.round();

        assertEquals(3.0, metric("read-to-dispatch-time-ms-avg", ApiKeys.PRODUCE));
        assertEquals(7.0, metric("dispatch-to-write-time-ms-avg", ApiKeys.PRODUCE));
        assertEquals(5.0, metric("read-to-dispatch-time-ms-max", ApiKeys.FETCH));
        assertEquals(12.0, metric("dispatch-to-write-time-ms-max", ApiKeys.FETCH));
        assertEquals(1.0, metric("request-total", ApiKeys.PRODUCE));
        assertEquals(1.0, metric("request-total", ApiKeys.FETCH));
        assertEquals(0.0, metric("untracked-total", null));
        assertEquals(0, timing.table().inFlight(), "every slot is free again");
        p.verify();
    }

    @Test
    void aResponseWrittenBeforeItsRequestHandlerReturnedIsTimedAtTheDispatch() throws Exception {
        FakeProcessor p = configured(Map.of());
        FakeRequest produce = p.read("c1", ApiKeys.PRODUCE);
        time.advanceMs(2);
        p.respond(produce); // Kafka's sendResponse inside handle(): written before handle returns
        p.round();
        assertEquals(Double.NaN, metric("request-total", ApiKeys.PRODUCE), "nothing recorded before the dispatch");
        time.advanceMs(1);
        p.dispatch(produce);

        assertEquals(3.0, metric("read-to-dispatch-time-ms-avg", ApiKeys.PRODUCE));
        assertEquals(0.0, metric("dispatch-to-write-time-ms-max", ApiKeys.PRODUCE));
        assertEquals(1.0, metric("written-before-dispatch-total", null));
        assertEquals(1.0, metric("request-total", ApiKeys.PRODUCE));
        assertEquals(0, timing.table().inFlight());
        p.verify();
    }

    @Test
    void itLeavesEveryConnectionToTheBrokerAndTakesNoAction() throws Exception {
        FakeProcessor p = configured(Map.of());
        for (int i = 0; i < 3; i++) {
            FakeRequest r = p.read("c1", ApiKeys.PRODUCE);
            assertEquals(Admission.CLASSIC, p.admission(r));
            assertTrue(p.isMuted("c1"), "the broker's read mutes it");
            p.dispatch(r);
            p.respond(r);
            p.round();
            assertFalse(p.isMuted("c1"), "the broker unmutes it after the response: the listener did not take it");
        }
        assertEquals(3, p.written().size());
        assertEquals(0, p.wakeups());
        assertEquals(3.0, metric("request-total", ApiKeys.PRODUCE));
        p.verify();
    }

    @Test
    void asAnObserverBesideAnotherListenerItTakesNoActionAndTimesTheSame() throws Exception {
        configured(Map.of());
        FakeProcessor p = FakeProcessor.observing(timing);
        FakeRequest r = p.read("c1", ApiKeys.PRODUCE);
        time.advanceMs(4);
        p.dispatch(r);
        time.advanceMs(6);
        p.respond(r);
        p.round();
        assertEquals(4.0, metric("read-to-dispatch-time-ms-max", ApiKeys.PRODUCE));
        assertEquals(6.0, metric("dispatch-to-write-time-ms-max", ApiKeys.PRODUCE));
        p.verify();
    }

    @Test
    void aFullTableCountsWhatItCannotTimeAndTimesTheRest() throws Exception {
        FakeProcessor p = configured(Map.of(RequestTiming.MAX_TRACKED, "16"));
        assertEquals(16, timing.table().capacity());
        FakeRequest[] timed = new FakeRequest[16];
        for (int i = 0; i < timed.length; i++) {
            timed[i] = p.read("c" + i, ApiKeys.FETCH);
        }
        FakeRequest extra = p.read("extra", ApiKeys.FETCH);
        assertEquals(1.0, metric("untracked-total", null), "its read");
        p.dispatch(extra);
        p.respond(extra);
        p.round();
        assertEquals(3.0, metric("untracked-total", null), "its read, dispatch and write");
        for (FakeRequest r : timed) {
            p.dispatch(r);
            p.respond(r);
        }
        p.round();
        assertEquals(16.0, metric("request-total", ApiKeys.FETCH));
        p.verify();
    }

    @Test
    void aRequestNeverAnsweredLosesItsSlotOnlyAfterTheAbandonAge() throws Exception {
        FakeProcessor p = configured(Map.of(RequestTiming.MAX_TRACKED, "16", RequestTiming.ABANDON_MS, "1000"));
        for (int i = 0; i < 16; i++) {
            p.read("c" + i, ApiKeys.PRODUCE);
            p.closeConnection("c" + i); // closed before the broker answered: no response, no dispatch
        }
        time.advanceMs(1000);
        p.read("late", ApiKeys.PRODUCE);
        assertEquals(1.0, metric("untracked-total", null), "not yet abandoned at exactly the age");
        time.advanceMs(1);
        FakeRequest r = p.read("later", ApiKeys.PRODUCE);
        assertEquals(1.0, metric("abandoned-total", null));
        p.dispatch(r);
        p.respond(r);
        p.round();
        assertEquals(1.0, metric("request-total", ApiKeys.PRODUCE));
        p.verify();
    }

    @Test
    void badSettingsAreRefusedNamingTheKey() {
        ConfigException e = assertThrows(
                ConfigException.class, () -> timing.configure(Map.of(RequestTiming.MAX_TRACKED, "8")));
        assertTrue(e.getMessage().contains(RequestTiming.MAX_TRACKED), e.getMessage());
        e = assertThrows(ConfigException.class, () -> timing.configure(Map.of(RequestTiming.ABANDON_MS, "soon")));
        assertTrue(e.getMessage().contains(RequestTiming.ABANDON_MS), e.getMessage());
    }

    @Test
    void theBrokerConstructorReportsToJmxUnderTheBrokersIdUntilClosed() throws Exception {
        RequestTiming<FakeRequest, FakeResponse> broker = new RequestTiming<>();
        broker.configure(Map.of("node.id", "7"));
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ObjectName produce =
                new ObjectName("dev.kpipe.examples:type=request-timing-metrics,broker=7,request=Produce");
        try {
            FakeProcessor p = new FakeProcessor(broker);
            FakeRequest r = p.read("c1", ApiKeys.PRODUCE);
            p.dispatch(r);
            p.respond(r);
            p.round();
            assertEquals(1.0, ((Number) jmx.getAttribute(produce, "request-total")).doubleValue());
            assertTrue(jmx.isRegistered(new ObjectName("dev.kpipe.examples:type=request-timing-metrics,broker=7")));
            p.verify();
        } finally {
            broker.close();
        }
        assertFalse(jmx.isRegistered(produce), "closed: unregistered");
    }
}
