// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.soak.SoakOptions;
import dev.kpipe.it.soak.SoakRun;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The soak ({@link SoakRun}, the code behind {@code ./demo.sh --scenario soak}) for a short time: 2 minutes of mixed
 * load by default, a 15 s warm-up and 105 s measured; {@code -Dkpipe.it.soak.duration.s=N} measures N seconds (with
 * the warm-up of {@link SoakOptions#defaults}: a tenth of N, 15 to 60 s). Passes if every
 * check of the run passed: zero client errors, every idempotent record read back once and in order, kpipe's gauges
 * 0 once the clients closed, each broker's heap after full GC grown by at most 32 MiB, no kpipe fault, pipelining
 * on both brokers, no ERROR line in the broker logs. The report goes to stdout.
 */
class SoakIT {

    @Test
    void mixedLoadWithClientRestartsLeavesNoErrorsAndNoLeaks() throws Exception {
        SoakOptions options =
                SoakOptions.defaults(Duration.ofSeconds(Long.getLong(SoakOptions.DURATION_PROPERTY, 105)));
        try (Cluster cluster = Cluster.start(SoakRun.clusterSpec(options))) {
            SoakRun.Result r = new SoakRun(cluster, options, System.err).run();
            System.out.print(r.report());
            assertTrue(r.passed(), () -> "soak checks failed (node logs: " + cluster.dir() + "):\n" + r.report());
        }
    }
}
