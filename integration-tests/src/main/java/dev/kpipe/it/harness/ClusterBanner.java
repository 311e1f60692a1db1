// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * What {@link ClusterMain} prints once its cluster is up: how to connect, what kpipe really did on each node, and Kafka's
 * tools to try, as commands for the cluster's Kafka version ({@link KafkaTools}).
 *
 * <p>What kpipe did comes from each node's log ({@link KpipeStatus}) and, for the JmxTool lines, from node 1's JMX
 * (whether {@code kafka.server:type=kpipe-metrics} is registered), not from the spec: with the jar in {@code libs/} a
 * broker that forbids attach (and has no {@code -javaagent}) or that kpipe cannot hook runs stock, and says so in one
 * ERROR. Called once on the CLI's main thread; reads logs and JMX.
 */
final class ClusterBanner {
    /** kpipe's metrics MBean, registered once kpipe is installed and enabled. */
    static final String KPIPE_METRICS = "kafka.server:type=kpipe-metrics";

    private ClusterBanner() {}

    /**
     * @param cluster the started cluster
     * @param slowAcksMs the follower's ack period of {@code --slow-acks}, or 0
     * @return the text to print
     */
    static String of(Cluster cluster, int slowAcksMs) {
        ClusterSpec spec = cluster.spec();
        HarnessSettings settings = cluster.settings();
        String bs = cluster.bootstrapServers();
        List<KpipeStatus> kpipe = cluster.nodes().stream()
                .map(n -> KpipeStatus.of(n.logSinceStart()))
                .collect(Collectors.toList());
        Set<KpipeStatus.State> states =
                kpipe.stream().map(KpipeStatus::state).collect(Collectors.toCollection(LinkedHashSet::new));
        StringBuilder out = new StringBuilder();
        out.append("\nKafka ")
                .append(cluster.kafkaVersion())
                .append(" cluster up: ")
                .append(spec.nodes())
                .append(" node(s), ")
                .append(spec.installPlugin() ? kpipeSummary(settings.pluginVersion(), states) : "stock (no kpipe)");
        if (slowAcksMs > 0) {
            out.append(", slow acks: node 2 acknowledges every ")
                    .append(slowAcksMs)
                    .append(" ms (topic demo on nodes 1,2, min.insync.replicas=2)");
        }
        out.append("\n\nbootstrap.servers=").append(bs).append('\n');
        if (spec.saslScram()) {
            out.append("SASL_PLAINTEXT (SCRAM-SHA-512) bootstrap.servers=")
                    .append(cluster.saslClientConfig("u", "p").get("bootstrap.servers"))
                    .append(" (create users with ConfigCommand --alter --add-config 'SCRAM-SHA-512=[password=...]')\n");
        }
        for (int i = 0; i < cluster.nodes().size(); i++) {
            KafkaNode n = cluster.nodes().get(i);
            out.append("  ")
                    .append(n)
                    .append("  jmx ")
                    .append(n.jmxServiceUrl())
                    .append("  log ")
                    .append(n.logFile())
                    .append('\n');
            if (spec.installPlugin()) {
                KpipeStatus s = kpipe.get(i);
                out.append("    kpipe: ")
                        .append(
                                switch (s.state()) {
                                    case NO_LINE -> "no line from kpipe in the log";
                                    case NOT_RUNNING -> "ERROR " + s.line();
                                    default -> s.shortLine();
                                })
                        .append('\n');
                s.warnings()
                        .forEach(w -> out.append("    kpipe WARN: ").append(w).append('\n'));
            }
        }
        out.append("\nTry (from another terminal):\n");
        tryLines(cluster, states).forEach(l -> out.append("  ").append(l).append('\n'));
        out.append("\nCtrl-C stops the cluster (stopping this process or the Maven process that runs it does too).\n");
        return out.toString();
    }

    private static String kpipeSummary(String version, Set<KpipeStatus.State> states) {
        if (states.equals(Set.of(KpipeStatus.State.RUNNING))) {
            return "kpipe " + version + " running on every node";
        }
        if (states.equals(Set.of(KpipeStatus.State.DISABLED))) {
            return "kpipe " + version + " in libs/ with kpipe.enable=false (stock until set to true)";
        }
        if (states.contains(KpipeStatus.State.RUNNING)) {
            return "kpipe " + version + " running on some nodes only (see each node's kpipe line)";
        }
        return "kpipe " + version + " in libs/ but NOT running: the brokers run stock (see each node's kpipe line)";
    }

    private static List<String> tryLines(Cluster cluster, Set<KpipeStatus.State> states) {
        KafkaTools tools = KafkaTools.of(cluster.kafkaHome(), cluster.kafkaVersion());
        String java = cluster.settings().javaExecutable() + " -Dlog4j2.configurationFile=" + cluster.toolsLog4jConfig()
                + " -cp '" + cluster.kafkaHome().resolve("libs") + "/*' ";
        String bs = cluster.bootstrapServers();
        List<String> lines = new ArrayList<>();
        // The same modest acks=all load in every mode: with slow acks it shows the gain, without it it is a smoke test.
        lines.add(java + tools.className(KafkaTools.PRODUCER_PERFORMANCE)
                + " --topic demo --num-records 5000 --record-size 1024 --throughput -1 "
                + tools.producerPerformanceOptions(bs, List.of("acks=all", "max.in.flight.requests.per.connection=5")));
        lines.add(java + tools.className(KafkaTools.CONSOLE_PRODUCER) + " --bootstrap-server " + bs + " --topic demo");
        lines.add(java + tools.className(KafkaTools.CONSOLE_CONSUMER) + " --bootstrap-server " + bs
                + " --topic demo --from-beginning");
        String configs = java + tools.className(KafkaTools.CONFIG_COMMAND) + " --bootstrap-server " + bs
                + " --entity-type brokers --entity-default --alter --add-config ";
        if (states.contains(KpipeStatus.State.RUNNING)) {
            lines.add(configs + "kpipe.enable=false");
        } else if (states.contains(KpipeStatus.State.DISABLED)) {
            lines.add(configs + "kpipe.enable=true");
        }
        // With --slow-acks node 1 leads topic demo (the first replica of its assignment): its dump shows the producer.
        KafkaNode first = cluster.node(1);
        if (kpipeMetricsRegistered(first)) {
            String jmx = java + tools.className(KafkaTools.JMX_TOOL) + " --jmx-url " + first.jmxServiceUrl()
                    + " --one-time true --object-name kafka.server:type=";
            lines.add(jmx + "kpipe-metrics --report-format properties");
            lines.add(jmx + "kpipe-connections");
        } else if (states.contains(KpipeStatus.State.DISABLED)) {
            lines.add("(kpipe.enable=false: kpipe's MBeans, which JmxTool reads, appear once it is set to true)");
        } else if (cluster.spec().installPlugin()) {
            lines.add(
                    "(no kpipe MBeans on node 1: kpipe is not running there, so JmxTool has nothing of kpipe to read)");
        }
        return lines;
    }

    private static boolean kpipeMetricsRegistered(KafkaNode node) {
        try {
            return node.jmx().isRegistered(new ObjectName(KPIPE_METRICS));
        } catch (IOException | JMException | RuntimeException e) {
            return false;
        }
    }
}
