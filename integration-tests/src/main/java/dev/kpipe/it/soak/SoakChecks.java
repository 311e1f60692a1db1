// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import static dev.kpipe.it.soak.SoakReport.mib;

import dev.kpipe.it.harness.KafkaNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The soak's checks ({@link SoakRun}): collects every violation in the order found and keeps the first {@value
 * #KEPT_VIOLATIONS}; checks one broker's kpipe objects and heap, kpipe's counters and its log, and the clients' errors.
 * Not thread-safe: used on the soak's calling thread only.
 */
final class SoakChecks {
    /** kpipe's per-connection state: none may be reachable once every client connection is closed. */
    static final String CONNECTION_PIPELINE_CLASS = "dev.kpipe.plugin.pipeline.ConnectionPipeline";

    private static final int KEPT_VIOLATIONS = 20;
    /** kpipe objects a broker may have more of at the end than at the start (its own idle connections). */
    private static final int KPIPE_OBJECT_SLACK = 32;

    private final SoakOptions options;
    private final List<String> violations = new ArrayList<>();
    private int violationCount;

    /** @param options the run's options (kpipe or stock, heap growth bound) */
    SoakChecks(SoakOptions options) {
        this.options = options;
    }

    /** Records a failed check. */
    void violation(String what) {
        violationCount++;
        if (violations.size() < KEPT_VIOLATIONS) {
            violations.add(what);
        }
    }

    /** @return the first {@value #KEPT_VIOLATIONS} failed checks, in the order found */
    List<String> violations() {
        return List.copyOf(violations);
    }

    /** @return how many checks failed in all */
    int violationCount() {
        return violationCount;
    }

    /**
     * With every client closed, no {@link #CONNECTION_PIPELINE_CLASS} may be reachable, and no more than a little
     * slack of other kpipe objects than at the start (class histograms after a full GC).
     *
     * @param node the broker's node id
     * @param start its heap at the start (after the warm-up, every client closed)
     * @param end its heap at the end (every client closed)
     */
    void kpipeObjects(int node, BrokerProbe.Heap start, BrokerProbe.Heap end) {
        long retained = end.classes().getOrDefault(CONNECTION_PIPELINE_CLASS, new long[2])[0];
        if (retained > 0) {
            violation(String.format(
                    Locale.ROOT,
                    "node %d: %d %s objects reachable with no client connected (leaked" + " per-connection state)",
                    node,
                    retained,
                    CONNECTION_PIPELINE_CLASS));
        }
        // Any other kpipe object left over after the clients closed is leaked state (a little slack for the broker's
        // own idle connections).
        long otherGrowth = end.kpipeInstances() - start.kpipeInstances();
        if (otherGrowth > KPIPE_OBJECT_SLACK) {
            violation(String.format(
                    Locale.ROOT,
                    "node %d: %d more kpipe objects at the end than at the start: %s",
                    node,
                    otherGrowth,
                    end.kpipeChanges(start)));
        }
    }

    /**
     * One broker at the end: heap growth after full GC at most {@link SoakOptions#maxHeapGrowthBytes()}; with kpipe,
     * no {@code plugin-fault-total}, no {@code classification-fallback-total}, some {@code pipelined-request-total};
     * no ERROR line in its log.
     *
     * @param n the broker
     * @param start its heap at the start
     * @param end its heap at the end
     * @param counters its kpipe counters at the end ({@link BrokerProbe#COUNTERS}; empty for stock)
     * @param errorLines ERROR lines its log gained during the run
     */
    void broker(
            KafkaNode n, BrokerProbe.Heap start, BrokerProbe.Heap end, Map<String, Double> counters, long errorLines) {
        int id = n.id();
        long growth = end.usedBytes() - start.usedBytes();
        if (growth > options.maxHeapGrowthBytes()) {
            violation(String.format(
                    Locale.ROOT,
                    "node %d: heap after full GC grew by %s (start %s, end %s), more than" + " %s",
                    id,
                    mib(growth),
                    mib(start.usedBytes()),
                    mib(end.usedBytes()),
                    mib(options.maxHeapGrowthBytes())));
        }
        if (options.kpipe()) {
            if (counters.get("plugin-fault-total") > 0) {
                violation("node " + id + ": plugin-fault-total = " + counters.get("plugin-fault-total"));
            }
            if (counters.get("classification-fallback-total") > 0) {
                violation("node " + id + ": classification-fallback-total = "
                        + counters.get("classification-fallback-total"));
            }
            if (counters.get("pipelined-request-total") == 0) {
                violation("node " + id + ": no request was pipelined (pipelined-request-total = 0)");
            }
        }
        if (errorLines > 0) {
            violation("node " + id + ": " + errorLines + " ERROR line(s) in " + n.logFile());
        }
    }

    /** No client may have seen an error. */
    void clientErrors(SoakStats stats) {
        if (stats.errors.get() > 0) {
            violation(stats.errors.get() + " client error(s); first: " + stats.firstErrors());
        }
    }
}
