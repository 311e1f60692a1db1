// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.HookCounters;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.metrics.JmxReporter;
import org.junit.jupiter.api.Test;

/** Which of a broker registry's reporters gives the broker's hooks: the newest kpipe owner, the older ones retired. */
class BrokersTest {

    @Test
    void aRegistryWithoutKpipeHasNoOwner() {
        assertNull(Brokers.newest(List.of()));
        assertNull(Brokers.newest(List.of(new JmxReporter())));
    }

    @Test
    void theNewestOwnerCountsAndTheOlderOnesAreTold() {
        FakeBroker.Owner old = new FakeBroker.Owner(new BrokerHooks("node 1", Set.of("PLAINTEXT"), new HookCounters()));
        FakeBroker.Owner classic = new FakeBroker.Owner(null); // kpipe.enable=false, or a broker kpipe could not hook
        assertSame(old, Brokers.newest(List.of(new JmxReporter(), old)));
        assertEquals(0, old.superseded);
        assertSame(classic, Brokers.newest(List.of(old, new JmxReporter(), classic)));
        assertEquals(1, old.superseded, "the restarted broker's reporter retires the previous one");
        assertEquals(0, classic.superseded);
    }
}
