// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.KafkaNode;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * Samples a broker's heap over JMX every 200 ms on its own thread: the peak heap used (as sampled) and the peak
 * of the old generation's usage right after a collection (what survives GC: the retained heap).
 */
final class HeapSampler implements Runnable {
    private final KafkaNode node;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile double peakUsed = Double.NaN;
    private volatile double peakOldAfterGc = Double.NaN;
    private volatile double max = Double.NaN;

    HeapSampler(KafkaNode node) {
        this.node = node;
        this.thread = new Thread(this, "bench-heap-sampler");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void stop() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5000);
    }

    @Override
    public void run() {
        while (running) {
            try {
                MBeanServerConnection jmx = node.jmx();
                javax.management.openmbean.CompositeData heap = (javax.management.openmbean.CompositeData)
                        jmx.getAttribute(new ObjectName("java.lang:type=Memory"), "HeapMemoryUsage");
                double used = ((Number) heap.get("used")).doubleValue();
                max = ((Number) heap.get("max")).doubleValue();
                peakUsed = Double.isNaN(peakUsed) ? used : Math.max(peakUsed, used);
                for (ObjectName pool : jmx.queryNames(new ObjectName("java.lang:type=MemoryPool,*"), null)) {
                    if (!String.valueOf(pool.getKeyProperty("name")).contains("Old Gen")) {
                        continue;
                    }
                    Object cu = jmx.getAttribute(pool, "CollectionUsage");
                    if (cu instanceof javax.management.openmbean.CompositeData c) {
                        double old = ((Number) c.get("used")).doubleValue();
                        peakOldAfterGc = Double.isNaN(peakOldAfterGc) ? old : Math.max(peakOldAfterGc, old);
                    }
                }
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // the broker may be busy; try again at the next tick
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    Map<String, Double> result() {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("leader_heap_used_peak_bytes", peakUsed);
        m.put("leader_old_gen_after_gc_peak_bytes", peakOldAfterGc);
        m.put("leader_heap_max_bytes", max);
        return m;
    }
}
