// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** kpipe's gauges of live per-connection state, read over JMX, and a wait until they are all 0. */
public final class KpipeGauges {
    /**
     * Every gauge of state kpipe keeps for open connections: connections it owns (counted, and its connection table's
     * size), requests in flight, responses and requests it holds, throttled connections, budget bytes in use and
     * connections waiting for the budget.
     */
    public static final List<String> LIVE_STATE = List.of(
            "pipelined-connections",
            "connections-tracked",
            "inflight-requests",
            "held-responses",
            "held-requests",
            "throttled-connections",
            "inflight-bytes",
            "budget-waiting-connections");

    private KpipeGauges() {}

    /** @return the current value of every {@link #LIVE_STATE} gauge */
    static Map<String, Double> read(KafkaNode node) throws Exception {
        Map<String, Double> m = new LinkedHashMap<>();
        for (String g : LIVE_STATE) {
            m.put(g, KpipeJmx.kpipe(node, g));
        }
        return m;
    }

    /**
     * Waits until every {@link #LIVE_STATE} gauge is exactly 0 (polling every 50 ms), else fails with the last values.
     *
     * @return how long it took, in ms
     */
    public static long awaitAllZero(KafkaNode node, Duration deadline) throws Exception {
        long t0 = System.nanoTime();
        long end = t0 + deadline.toNanos();
        Map<String, Double> last;
        while (true) {
            last = read(node);
            if (last.values().stream().allMatch(v -> v == 0.0)) {
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            }
            if (System.nanoTime() > end) {
                fail("kpipe state not released within " + deadline.toSeconds() + " s: " + last);
            }
            TimeUnit.MILLISECONDS.sleep(50); // poll interval
        }
    }
}
