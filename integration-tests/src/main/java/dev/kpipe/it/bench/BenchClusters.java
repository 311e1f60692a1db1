// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.HarnessSettings;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Starts a scenario's clusters for {@link BenchMain}: stock and kpipe (at the same time unless {@code
 * --sequential-start}), then the A/A control (a second stock cluster) if the scenario has one. Stateless; called
 * from the benchmark's main thread (the parallel start uses one more thread for the stock cluster). Also creates the
 * scenario's topic on each ({@link #createTopic}).
 */
final class BenchClusters {
    private BenchClusters() {}

    /**
     * @param s the scenario
     * @param options the run's options (parallel start, heap)
     * @param settings the harness settings
     * @param progress the progress line (cleared before each log line)
     * @return {stock, kpipe}, or {stock, kpipe, stock-b} with the A/A control: all started and ready
     * @throws Exception if a cluster fails to start (the ones started are closed)
     */
    static Cluster[] start(Scenario s, BenchOptions options, HarnessSettings settings, Progress progress)
            throws Exception {
        Cluster[] pair = startPair(s, options, settings, progress);
        if (!s.aaControl) {
            return pair;
        }
        Cluster control = Cluster.create(s.spec(Variant.STOCK, options, "-b"), settings);
        try {
            control.start();
        } catch (Exception | Error e) {
            control.close();
            pair[1].close();
            pair[0].close();
            throw e;
        }
        progress.clear();
        System.err.printf(Locale.ROOT, "bench: %s A/A control cluster up (%s)%n", s.label, control.dir());
        return new Cluster[] {pair[0], pair[1], control};
    }

    /** @return {stock, kpipe}, both started and ready */
    private static Cluster[] startPair(Scenario s, BenchOptions options, HarnessSettings settings, Progress progress)
            throws Exception {
        Cluster stock = Cluster.create(s.spec(Variant.STOCK, options), settings);
        Cluster kpipe;
        try {
            kpipe = Cluster.create(s.spec(Variant.KPIPE, options), settings);
        } catch (RuntimeException e) {
            stock.close();
            throw e;
        }
        long t0 = System.nanoTime();
        try {
            if (options.parallelStart()) {
                Thread t = new Thread(stock::start, "bench-start-stock");
                Throwable[] failure = new Throwable[1];
                t.setUncaughtExceptionHandler((th, e) -> failure[0] = e);
                t.start();
                kpipe.start();
                t.join();
                if (failure[0] != null) {
                    throw new IllegalStateException("starting the stock cluster failed", failure[0]);
                }
            } else {
                stock.start();
                kpipe.start();
            }
        } catch (Exception | Error e) {
            stock.close();
            kpipe.close();
            throw e;
        }
        progress.clear();
        System.err.printf(
                Locale.ROOT,
                "bench: %s clusters up in %.1f s (stock %s, kpipe %s)%n",
                s.label,
                (System.nanoTime() - t0) / 1e9,
                stock.dir(),
                kpipe.dir());
        return new Cluster[] {stock, kpipe};
    }

    /**
     * Creates the scenario's topics ({@link Scenario#newTopics()}) and waits until node 1 leads every partition of each
     * with the full ISR, in the cluster's metadata and in node 1's own replica manager (a broker slow to apply the
     * metadata, e.g. pinned to one busy CPU, otherwise answers the first produce requests NOT_LEADER_OR_FOLLOWER).
     */
    static void createTopic(Cluster c, Scenario s) throws Exception {
        Admin admin = c.admin();
        List<NewTopic> topics = s.newTopics();
        admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        int partitions = 0;
        for (NewTopic t : topics) {
            awaitLedByNode1(c, t.name(), t.replicasAssignments().size());
            partitions += t.replicasAssignments().size();
        }
        awaitLeaderCount(c, partitions);
    }

    /**
     * Waits until node 1's {@code kafka.server:type=ReplicaManager,name=LeaderCount} reaches {@code partitions}: the
     * broker has created the partitions it leads. Without JMX it says so and returns.
     */
    private static void awaitLeaderCount(Cluster c, int partitions) throws Exception {
        ObjectName leaderCount = new ObjectName("kafka.server:type=ReplicaManager,name=LeaderCount");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        double led = Double.NaN;
        while (true) {
            try {
                led = ((Number) c.node(1).jmx().getAttribute(leaderCount, "Value")).doubleValue();
            } catch (Exception e) {
                System.err.println("bench: node 1's LeaderCount not readable over JMX (" + e + "); not awaited");
                return;
            }
            if (led >= partitions) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "node 1 leads " + led + " partitions, not " + partitions + ", 60 s after the topics' creation");
            }
            Thread.sleep(100);
        }
    }

    private static void awaitLedByNode1(Cluster c, String topic, int partitions) throws Exception {
        Admin admin = c.admin();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                TopicDescription d = admin.describeTopics(List.of(topic))
                        .allTopicNames()
                        .get(10, TimeUnit.SECONDS)
                        .get(topic);
                boolean ok = d.partitions().size() == partitions;
                for (TopicPartitionInfo p : d.partitions()) {
                    ok &= p.leader() != null
                            && p.leader().id() == 1
                            && p.isr().size() == p.replicas().size();
                }
                if (ok) {
                    try {
                        c.node(1).jmx(); // connect now, not at the first window edge
                    } catch (RuntimeException e) {
                        System.err.println(
                                "bench: no JMX connection to node 1 (broker-side figures will be missing): " + e);
                    }
                    return;
                }
            } catch (ExecutionException e) {
                // not yet known everywhere
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topic " + topic + " not led by node 1 with full ISR within 60 s");
            }
            Thread.sleep(100);
        }
    }
}
