// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.kpipe.interceptor.BrokerHooks;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.junit.jupiter.api.Test;

/** Which of a broker registry's reporters gives the broker's hooks: the newest kpipe owner, the older ones retired. */
class BrokersTest {

    /** A kpipe reporter that counts how often it was told a newer one took over. */
    private static final class Owner implements MetricsReporter, BrokerHooks.Owner {
        final BrokerHooks hooks;
        int superseded;

        Owner(BrokerHooks hooks) {
            this.hooks = hooks;
        }

        @Override
        public BrokerHooks brokerHooks() {
            return hooks;
        }

        @Override
        public void superseded() {
            superseded++;
        }

        @Override
        public void init(List<KafkaMetric> metrics) {}

        @Override
        public void metricChange(KafkaMetric metric) {}

        @Override
        public void metricRemoval(KafkaMetric metric) {}

        @Override
        public void close() {}

        @Override
        public void configure(Map<String, ?> configs) {}
    }

    @Test
    void aRegistryWithoutKpipeHasNoOwner() {
        assertNull(Brokers.newest(List.of()));
        assertNull(Brokers.newest(List.of(new JmxReporter())));
    }

    @Test
    void theNewestOwnerCountsAndTheOlderOnesAreTold() {
        Owner old = new Owner(new BrokerHooks("node 1", Set.of("PLAINTEXT")));
        Owner classic = new Owner(null); // kpipe.enable=false, or a broker kpipe could not hook
        assertSame(old, Brokers.newest(List.of(new JmxReporter(), old)));
        assertEquals(0, old.superseded);
        assertSame(classic, Brokers.newest(List.of(old, new JmxReporter(), classic)));
        assertEquals(1, old.superseded, "the restarted broker's reporter retires the previous one");
        assertEquals(0, classic.superseded);
    }
}
