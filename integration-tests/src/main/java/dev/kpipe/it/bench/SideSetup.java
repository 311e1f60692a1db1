// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What {@link BenchMain} prints and records of {@link SideOptions}: the pinning ({@link Pinning}) and the observer
 * beside kpipe ({@link KpipeObserver}). Stateless; the benchmark's main thread.
 */
final class SideSetup {
    private SideSetup() {}

    /**
     * @param o the side options
     * @return the run's {@code options} entries: {@code broker_cpus}, {@code client_cpus}, {@code kpipe_observer}
     *     (empty strings when not given)
     */
    static Map<String, Object> optionsMap(SideOptions o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("broker_cpus", o.brokerCpus() == null ? "" : o.brokerCpus().text());
        m.put("client_cpus", o.clientCpus() == null ? "" : o.clientCpus().text());
        m.put("kpipe_observer", o.kpipeObserver() == null ? "" : o.kpipeObserver().id);
        return m;
    }

    /**
     * @param pinning {@link Pinning#apply}'s answer
     * @param o the side options
     * @return the run's top-level JSON entries {@code pinning} and {@code kpipe_observer} (id, class, jar), each only
     *     when asked for
     */
    static Map<String, Object> runMap(Map<String, Object> pinning, SideOptions o) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (!pinning.isEmpty()) {
            m.put("pinning", pinning);
        }
        KpipeObserver observer = o.kpipeObserver();
        if (observer != null) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("id", observer.id);
            x.put("class", observer.className);
            x.put("jar", observer.jar().toAbsolutePath().toString());
            m.put("kpipe_observer", x);
        }
        return m;
    }

    /**
     * @param pinning {@link Pinning#apply}'s answer
     * @param o the side options
     * @return the header's lines for them (each ending in a newline), or an empty string
     */
    static String header(Map<String, Object> pinning, SideOptions o) {
        StringBuilder sb = new StringBuilder();
        if (!pinning.isEmpty()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "pinning: brokers on CPU(s) %s (taskset -c), the runner and its clients on %s%n",
                    pinning.get("broker_cpus"),
                    pinning.get("client_cpus")));
        }
        if (o.kpipeObserver() != null) {
            sb.append(String.format(
                    Locale.ROOT,
                    "kpipe side: the SPI observer %s (%s) beside kpipe; the stock side without it%n",
                    o.kpipeObserver().id,
                    o.kpipeObserver().className));
        }
        return sb.toString();
    }

    /**
     * @param r a round of the kpipe side
     * @param o the side options
     * @param kpipe the kpipe side's cluster
     * @return {@code r}, with {@code kpipe_observer_produce_requests_counted_at_end} when an observer is installed
     */
    static RoundResult withObserverEvidence(RoundResult r, SideOptions o, Cluster kpipe) {
        if (o.kpipeObserver() == null) {
            return r;
        }
        return r.withExtra(Map.of(
                "kpipe_observer_produce_requests_counted_at_end",
                o.kpipeObserver().produceRequestsCounted(kpipe.node(1))));
    }
}
