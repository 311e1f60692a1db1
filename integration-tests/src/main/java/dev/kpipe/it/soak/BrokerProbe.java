// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import dev.kpipe.it.harness.KafkaNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;

/**
 * Reads a broker JVM over JMX: kpipe's gauges and counters ({@code kafka.server:type=kpipe-metrics}) and its heap
 * after a full garbage collection. Stateless; every call goes to the node's JMX connection ({@link KafkaNode#jmx()}),
 * so calls for one node should come from one thread at a time.
 */
public final class BrokerProbe {
    /** kpipe's MBean: metrics group {@code kpipe-metrics} in the broker's {@code kafka.server} domain. */
    public static final String KPIPE_MBEAN = "kafka.server:type=kpipe-metrics";

    /** The gauges of live per-connection and budget state; each must be 0 once no client is connected. */
    public static final List<String> STATE_GAUGES = List.of(
            "pipelined-connections",
            "inflight-requests",
            "held-responses",
            "held-requests",
            "inflight-bytes",
            "budget-waiting-connections",
            "throttled-connections");

    /** Counters reported at the end of a run. */
    public static final List<String> COUNTERS = List.of(
            "upgrade-total",
            "downgrade-total",
            "pipelined-request-total",
            "inflight-requests-per-connection-max",
            "drain-total",
            "inflight-bytes-max",
            "budget-wait-total",
            "classification-fallback-total",
            "plugin-fault-total");

    private static final String DIAGNOSTIC_MBEAN = "com.sun.management:type=DiagnosticCommand";
    private static final String KPIPE_CLASS_PREFIX = "dev.kpipe.";
    /**
     * The SPI's test kit ({@code ContractCheck}), which the integration tests run on every broker: it remembers the
     * requests of each open connection and the ids of closed ones by design, so it is not kpipe's state and not counted.
     */
    private static final String TEST_KIT_PREFIX = "dev.kpipe.spi.testkit.";

    private BrokerProbe() {}

    /** @return true for a class of kpipe's own state: {@code dev.kpipe.*} but the SPI's test kit */
    static boolean isKpipeState(String className) {
        return className.startsWith(KPIPE_CLASS_PREFIX) && !className.startsWith(TEST_KIT_PREFIX);
    }

    /**
     * @param node a running node
     * @param metric a kpipe metric name, e.g. {@code pipelined-connections}
     * @return its value
     * @throws Exception if JMX fails or the metric does not exist
     */
    public static double kpipe(KafkaNode node, String metric) throws Exception {
        return ((Number) node.jmx().getAttribute(new ObjectName(KPIPE_MBEAN), metric)).doubleValue();
    }

    /**
     * @param node a running node
     * @param metrics kpipe metric names
     * @return name to value, in the given order
     * @throws Exception if JMX fails or a metric does not exist
     */
    public static Map<String, Double> kpipe(KafkaNode node, List<String> metrics) throws Exception {
        Map<String, Double> m = new LinkedHashMap<>();
        for (String name : metrics) {
            m.put(name, kpipe(node, name));
        }
        return m;
    }

    /**
     * The heap of a broker JVM after a full, stop-the-world collection.
     *
     * @param usedBytes {@code java.lang:type=Memory} HeapMemoryUsage.used read right after the collection, bytes
     * @param liveBytes the bytes of all objects the class histogram counted (live objects after the collection)
     * @param kpipeInstances instances of {@code dev.kpipe.*} classes (the plugin's own state)
     * @param kpipeBytes their shallow size, bytes
     * @param fullCollections how many collections {@code G1 Old Generation} (G1's full GC) ran during the call
     * @param classes the class histogram: class name to {instances, shallow bytes}
     */
    public record Heap(
            long usedBytes,
            long liveBytes,
            long kpipeInstances,
            long kpipeBytes,
            long fullCollections,
            Map<String, long[]> classes) {

        /**
         * @param earlier a reading of the same JVM taken before this one
         * @param limit how many classes to return
         * @return the classes whose live bytes grew the most since {@code earlier}: name to {instances, bytes} growth,
         *     largest first
         */
        public Map<String, long[]> topGrowth(Heap earlier, int limit) {
            Map<String, long[]> out = new LinkedHashMap<>();
            classes.entrySet().stream()
                    .map(e -> {
                        long[] was = earlier.classes.getOrDefault(e.getKey(), new long[2]);
                        return Map.entry(e.getKey(), new long[] {e.getValue()[0] - was[0], e.getValue()[1] - was[1]});
                    })
                    .filter(e -> e.getValue()[1] > 0)
                    .sorted((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]))
                    .limit(limit)
                    .forEach(e -> out.put(e.getKey(), e.getValue()));
            return out;
        }

        /**
         * @param earlier a reading of the same JVM taken before this one
         * @return the {@code dev.kpipe.*} classes whose instance count changed since {@code earlier}: name to change
         */
        public Map<String, Long> kpipeChanges(Heap earlier) {
            Map<String, Long> out = new java.util.TreeMap<>();
            java.util.Set<String> names = new java.util.HashSet<>(classes.keySet());
            names.addAll(earlier.classes.keySet());
            for (String n : names) {
                if (isKpipeState(n)) {
                    long d = classes.getOrDefault(n, new long[2])[0]
                            - earlier.classes.getOrDefault(n, new long[2])[0];
                    if (d != 0) {
                        out.put(n, d);
                    }
                }
            }
            return out;
        }
    }

    /**
     * Runs a full GC in the node's JVM, then reads its heap. The broker JVMs run with Kafka's {@code
     * -XX:+ExplicitGCInvokesConcurrent}, under which {@code System.gc()}, {@code MemoryMXBean.gc()} and the {@code
     * GC.run} diagnostic command only start a concurrent G1 cycle that leaves most garbage for later mixed
     * collections; the {@code GC.class_histogram} diagnostic command ({@code jmap -histo:live}) always runs a full,
     * stop-the-world collection first, and its total is exactly the live heap. Pauses the broker for the collection
     * (tens to hundreds of ms).
     *
     * @param node a running node
     * @return its heap after the collection
     * @throws Exception if JMX fails or the histogram cannot be parsed
     */
    public static Heap heapAfterFullGc(KafkaNode node) throws Exception {
        MBeanServerConnection jmx = node.jmx();
        ObjectName oldGen = new ObjectName("java.lang:type=GarbageCollector,name=G1 Old Generation");
        long before = ((Number) jmx.getAttribute(oldGen, "CollectionCount")).longValue();
        String histogram = (String) jmx.invoke(
                new ObjectName(DIAGNOSTIC_MBEAN), "gcClassHistogram", new Object[] {new String[0]}, new String[] {
                    String[].class.getName()
                });
        CompositeData usage =
                (CompositeData) jmx.getAttribute(new ObjectName("java.lang:type=Memory"), "HeapMemoryUsage");
        long used = ((Number) usage.get("used")).longValue();
        long after = ((Number) jmx.getAttribute(oldGen, "CollectionCount")).longValue();
        long total = -1;
        long kpipeInstances = 0;
        long kpipeBytes = 0;
        Map<String, long[]> classes = new java.util.HashMap<>();
        // Lines: "   12:          3456         78912  dev.kpipe.plugin.pipeline.ConnectionPipeline" (module suffix
        // possible), and at the end "Total        1234567      89012345".
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 3 && f[0].equals("Total")) {
                total = Long.parseLong(f[2]);
            } else if (f.length >= 4 && f[0].endsWith(":")) {
                long instances = Long.parseLong(f[1]);
                long bytes = Long.parseLong(f[2]);
                classes.merge(f[3], new long[] {instances, bytes}, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
                if (isKpipeState(f[3])) {
                    kpipeInstances += instances;
                    kpipeBytes += bytes;
                }
            }
        }
        if (total < 0) {
            throw new IllegalStateException("no Total line in the class histogram of node " + node.id() + ": "
                    + histogram.substring(Math.max(0, histogram.length() - 300)));
        }
        return new Heap(used, total, kpipeInstances, kpipeBytes, after - before, Map.copyOf(classes));
    }
}
