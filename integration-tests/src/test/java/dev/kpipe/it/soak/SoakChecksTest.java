// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The soak's checks that need no broker: leftover kpipe objects, client errors, and how violations are kept. */
class SoakChecksTest {
    private static final SoakOptions OPTIONS = SoakOptions.defaults(Duration.ofMinutes(2));

    private static BrokerProbe.Heap heap(long kpipeInstances, Map<String, long[]> classes) {
        return new BrokerProbe.Heap(100 << 20, 90 << 20, kpipeInstances, kpipeInstances * 32, 1, classes);
    }

    /** The SPI's test kit, which the integration tests run on every broker, keeps state by design: not kpipe's. */
    @Test
    void theSpisTestKitIsNotCountedAsKpipeState() {
        assertTrue(BrokerProbe.isKpipeState("dev.kpipe.plugin.pipeline.ConnectionPipeline"));
        assertTrue(BrokerProbe.isKpipeState("dev.kpipe.spi.Admission"));
        assertEquals(false, BrokerProbe.isKpipeState("dev.kpipe.spi.testkit.ContractCheck$Identity"));
        assertEquals(false, BrokerProbe.isKpipeState("kafka.network.Processor"));
    }

    @Test
    void aConnectionPipelineLeftWithNoClientIsAViolation() {
        SoakChecks c = new SoakChecks(OPTIONS);
        c.kpipeObjects(1, heap(10, Map.of()), heap(10, Map.of()));
        assertEquals(List.of(), c.violations(), "nothing left over");
        c.kpipeObjects(2, heap(10, Map.of()), heap(11, Map.of(SoakChecks.CONNECTION_PIPELINE_CLASS, new long[] {1, 64
        })));
        assertEquals(
                List.of("node 2: 1 dev.kpipe.plugin.pipeline.ConnectionPipeline objects reachable with no client"
                        + " connected (leaked per-connection state)"),
                c.violations());
    }

    @Test
    void otherKpipeObjectsMayGrowByTheSlackOnly() {
        SoakChecks c = new SoakChecks(OPTIONS);
        c.kpipeObjects(1, heap(10, Map.of()), heap(42, Map.of()));
        assertEquals(0, c.violationCount(), "32 more: the broker's own idle connections");
        c.kpipeObjects(
                1,
                heap(10, Map.of("dev.kpipe.plugin.X", new long[] {10, 0})),
                heap(43, Map.of("dev.kpipe.plugin.X", new long[] {43, 0})));
        assertEquals(
                List.of("node 1: 33 more kpipe objects at the end than at the start: {dev.kpipe.plugin.X=33}"),
                c.violations());
    }

    @Test
    void clientErrorsAreOneViolationWithTheFirstErrors() {
        SoakChecks c = new SoakChecks(OPTIONS);
        SoakStats stats = new SoakStats();
        c.clientErrors(stats);
        assertEquals(0, c.violationCount());
        stats.error("producer-1", "send", new IllegalStateException("boom"));
        c.clientErrors(stats);
        assertEquals(1, c.violationCount());
        assertTrue(
                c.violations().get(0).startsWith("1 client error(s); first: "),
                c.violations().get(0));
        assertTrue(c.violations().get(0).contains("boom"), c.violations().get(0));
    }

    @Test
    void theFirst20ViolationsAreKeptAndAllCounted() {
        SoakChecks c = new SoakChecks(OPTIONS);
        for (int i = 0; i < 25; i++) {
            c.violation("v" + i);
        }
        assertEquals(25, c.violationCount());
        assertEquals(20, c.violations().size());
        assertEquals("v0", c.violations().get(0));
        assertEquals("v19", c.violations().get(19));
    }
}
