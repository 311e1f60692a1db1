// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Watches kpipe's metrics on one node over JMX while one client produces, so that each test shows that its own
 * client's connection was pipelined even when earlier tests of the class used the same cluster.
 *
 * <p>A sampler thread reads {@code inflight-requests-per-connection-avg} (requests in flight now per pipelined
 * connection) every 2 ms and keeps the peak; {@code upgrade-total} and {@code pipelined-request-total} are read at
 * {@link #start} and {@link #stop}. Only producing connections are ever upgraded (produce is the only request that
 * upgrades one), so with one client producing, a peak of 2 or more means that client had 2 or more requests in flight
 * on one connection at once. With slow acks (see {@link RecordCheck}) a pipelined request is in flight for up to 50
 * ms, many samples long.
 */
final class PipeliningProbe {
    private final KafkaNode node;
    private final double upgradesBefore;
    private final double pipelinedBefore;
    private final Thread sampler;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private volatile boolean stopping;
    private volatile double peak;
    private volatile long samples;

    private PipeliningProbe(KafkaNode node) throws Exception {
        this.node = node;
        this.upgradesBefore = KpipeJmx.kpipe(node, "upgrade-total");
        this.pipelinedBefore = KpipeJmx.kpipe(node, "pipelined-request-total");
        this.sampler = new Thread(this::sample, "pipelining-probe-node-" + node.id());
        sampler.setDaemon(true);
    }

    /**
     * @param node the node whose connections the client produces on (the leader of its partitions)
     * @return a started probe
     * @throws Exception if JMX fails
     */
    static PipeliningProbe start(KafkaNode node) throws Exception {
        PipeliningProbe probe = new PipeliningProbe(node);
        probe.sampler.start();
        return probe;
    }

    private void sample() {
        while (!stopping) {
            try {
                double v = KpipeJmx.kpipe(node, "inflight-requests-per-connection-avg");
                if (v > peak) {
                    peak = v;
                }
                samples++;
                TimeUnit.MILLISECONDS.sleep(2);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                failure.compareAndSet(null, e);
                return;
            }
        }
    }

    /**
     * Stops sampling and reads the counters again.
     *
     * @return what the node saw since {@link #start}
     * @throws Exception if a JMX read failed
     */
    Observation stop() throws Exception {
        stopping = true;
        sampler.join(10_000);
        if (failure.get() != null) {
            throw failure.get();
        }
        return new Observation(
                peak,
                samples,
                KpipeJmx.kpipe(node, "upgrade-total") - upgradesBefore,
                KpipeJmx.kpipe(node, "pipelined-request-total") - pipelinedBefore,
                KpipeJmx.kpipe(node, "inflight-requests-per-connection-max"),
                KpipeJmx.produceErrors(node, "OUT_OF_ORDER_SEQUENCE_NUMBER"),
                KpipeJmx.kpipe(node, "plugin-fault-total"));
    }

    /**
     * Asserts that the client's connection was pipelined: upgraded, at least 2 requests in flight on it at once, no
     * OUT_OF_ORDER_SEQUENCE_NUMBER and no fault in kpipe.
     *
     * @param client the client, for messages
     */
    static void assertPipelined(Observation seen, String client) {
        assertUpgraded(seen, client);
        assertTrue(
                seen.peakInflightPerConnection() >= 2,
                client + ": at least 2 requests in flight at once on its connection; " + seen);
    }

    /**
     * Asserts that the client's connection was upgraded and its produce requests admitted as pipelined, with no
     * OUT_OF_ORDER_SEQUENCE_NUMBER and no fault in kpipe.
     *
     * @param client the client, for messages
     */
    static void assertUpgraded(Observation seen, String client) {
        assertTrue(seen.upgrades() >= 1, client + ": its connection was upgraded to pipelined mode; " + seen);
        assertTrue(seen.pipelinedRequests() >= 2, client + ": requests admitted as pipelined; " + seen);
        assertEquals(0, seen.outOfOrderSequenceErrors(), client + ": no OUT_OF_ORDER_SEQUENCE_NUMBER; " + seen);
        assertEquals(0.0, seen.pluginFaults(), client + ": no fault caught in kpipe; " + seen);
    }

    /**
     * @param peakInflightPerConnection the highest {@code inflight-requests-per-connection-avg} sampled
     * @param samples how many samples were taken
     * @param upgrades connections upgraded to pipelined mode meanwhile
     * @param pipelinedRequests requests admitted on pipelined connections meanwhile
     * @param inflightMaxSinceStart {@code inflight-requests-per-connection-max} (since the node started)
     * @param outOfOrderSequenceErrors produce responses with OUT_OF_ORDER_SEQUENCE_NUMBER since the node started
     * @param pluginFaults {@code plugin-fault-total} (since the node started)
     */
    record Observation(
            double peakInflightPerConnection,
            long samples,
            double upgrades,
            double pipelinedRequests,
            double inflightMaxSinceStart,
            long outOfOrderSequenceErrors,
            double pluginFaults) {
        @Override
        public String toString() {
            return String.format(
                    "peak in flight per connection %.1f (%d samples), upgrades %.0f, pipelined requests"
                            + " %.0f, inflight-requests-per-connection-max %.0f, OUT_OF_ORDER_SEQUENCE_NUMBER %d, plugin faults %.0f",
                    peakInflightPerConnection,
                    samples,
                    upgrades,
                    pipelinedRequests,
                    inflightMaxSinceStart,
                    outOfOrderSequenceErrors,
                    pluginFaults);
        }
    }
}
