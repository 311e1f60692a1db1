// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.testkit.FakeProcessor;
import dev.kpipe.spi.testkit.FakeRequest;
import dev.kpipe.spi.testkit.FakeResponse;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;

/**
 * What timing a request costs on its path: the listener's three events for one request, called directly (the fake
 * processor serves only as the accessors), on Kafka's system clock. Allocation is measured with the thread's allocated
 * bytes (HotSpot) after a warm-up and must stay under a byte per request; the time per request is printed, not
 * asserted.
 */
class RequestTimingCostTest {

    private static final int REQUESTS = 200_000;
    private static final int IN_FLIGHT = 64;

    @Test
    void timingARequestAllocatesNothing() {
        RequestTiming<FakeRequest, FakeResponse> timing = new RequestTiming<>(Time.SYSTEM, List.of());
        timing.configure(Map.of("node.id", "1"));
        try {
            FakeProcessor p = new FakeProcessor(timing);
            FakeRequest[] requests = new FakeRequest[IN_FLIGHT];
            FakeResponse[] responses = new FakeResponse[IN_FLIGHT];
            for (int i = 0; i < IN_FLIGHT; i++) {
                requests[i] = p.read("c" + i, ApiKeys.PRODUCE); // read and timed once: the loop reads them again
                timing.onRequestDispatched(requests[i], requests[i].context());
                responses[i] = new FakeResponse(requests[i], dev.kpipe.spi.ResponseKind.SEND);
                timing.onResponseWritten(p, responses[i]);
            }
            run(timing, p, requests, responses); // warm-up
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
            long start = System.nanoTime();
            run(timing, p, requests, responses);
            long nanos = System.nanoTime() - start;
            long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;

            assertEquals(IN_FLIGHT + 2.0 * REQUESTS, timing.metrics().value("request-total", ApiKeys.PRODUCE));
            assertEquals(0.0, timing.metrics().value("untracked-total", null));
            // Under 1 B per request: one object per request would be 16 B or more (3.2 MB here); what is left is the
            // sensors' sample windows rolling over with the clock (0 to ~2 KB measured in all)
            assertTrue(allocated < REQUESTS, () -> allocated + " bytes for " + REQUESTS + " requests");
            System.out.printf(
                    "RequestTimingCostTest: %d bytes allocated for %d requests; %.0f ns per request (3 events)%n",
                    allocated, REQUESTS, (double) nanos / REQUESTS);
        } finally {
            timing.close();
        }
    }

    /** Each request's three events, {@value #IN_FLIGHT} requests in flight at a time. */
    private static void run(
            RequestTiming<FakeRequest, FakeResponse> timing,
            FakeProcessor p,
            FakeRequest[] requests,
            FakeResponse[] responses) {
        for (int i = 0; i < REQUESTS; i += IN_FLIGHT) {
            for (FakeRequest q : requests) {
                timing.onRequestRead(p, q, q.context(), null, 100);
            }
            for (FakeRequest q : requests) {
                timing.onRequestDispatched(q, q.context());
            }
            for (FakeResponse r : responses) {
                timing.onResponseWritten(p, r);
            }
        }
    }
}
