// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaCluster;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** kpipe installed (jar in libs/, configured as metric reporter) but {@code kpipe.enable=false}: a stock broker. */
@KafkaCluster(nodes = 1, kpipe = false)
class KpipeDisabledIT {

    @Test
    void idempotentProducerRoundTripOf10kRecordsKeepsContentAndPerPartitionOrder(Cluster cluster) throws Exception {
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "disabled", 3, (short) 1, 10_000);
        RoundTrip.consumeAndVerify(cluster, "disabled", List.of(acks), Duration.ofSeconds(60));
    }

    @Test
    void pluginIsInstalledButDoesNotStart(Cluster cluster) {
        assertTrue(
                Files.isRegularFile(
                        cluster.libsDir().resolve(cluster.settings().pluginJar().getFileName())),
                "kpipe jar in the broker's libs/");
        Properties config = cluster.node(1).config();
        assertEquals(ClusterSpec.KPIPE_PLUGIN_CLASS, config.getProperty("metric.reporters"));
        assertEquals("false", config.getProperty("kpipe.enable"));
        assertEquals(List.of(), KpipeLog.startedLines(cluster.node(1).log()), "no 'kpipe ... started' line");
    }
}
