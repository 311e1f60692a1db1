package dev.kpipe.it.harness;

import dev.kpipe.it.watchdog.ParentWatchdog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Command line: starts a cluster, prints how to connect, runs until Ctrl-C (SIGINT/SIGTERM), then stops it.
 *
 * <pre>
 * ClusterMain [--nodes N] [--kpipe true|false] [--no-plugin] [--heap 1g] [--sasl-scram] [--kafka-version V]
 *             [--zookeeper] [--javaagent] [--kafka-opts "-XX:+DisableAttachMechanism ..."] [--slow-acks W]
 *             [--config key=value | nodeId:key=value]... [--exit-with-parent]
 * </pre>
 *
 * {@code --slow-acks W} makes acknowledging an acks=all produce slow, as benchmark scenario S1 does: at least 2 nodes,
 * node 2 (the follower) fetches with {@code replica.fetch.min.bytes} far above what is produced and {@code
 * replica.fetch.wait.max.ms=W}, and a topic {@code demo} is created on nodes 1 and 2 with {@code
 * min.insync.replicas=2}, led by node 1. On a fast local cluster an acks=all produce is answered within about a
 * millisecond, so pipelining barely shows; with slow acks one producer connection is capped near 1/W requests/s on
 * stock Kafka and near {@code max.in.flight}/W with kpipe.
 *
 * {@code --javaagent} also starts the brokers with {@code -javaagent:<libs/kpipe jar>}; {@code --kafka-opts} adds JVM
 * options (space separated) to every node as {@code KAFKA_OPTS} would; {@code {node}} in them stands for the node's
 * id (e.g. a port per node).
 *
 * {@code --kafka-version} runs another laid-out Kafka distribution ({@code integration-tests/target/kafka-V}, see
 * {@link HarnessSettings#kafkaHome(String)}) than the build's; {@code --zookeeper} runs it in ZooKeeper mode (3.8/3.9
 * only: a ZooKeeper server from the distribution's jars, brokers with {@code zookeeper.connect}).
 *
 * Stopping: Ctrl-C or SIGTERM runs the harness's shutdown hook, which stops the nodes; the nodes also exit on their
 * own once this JVM is gone ({@link ParentWatchdog}), so SIGKILL leaves no broker behind. With {@code
 * --exit-with-parent} (the {@code -Pcluster} Maven profile passes it) this JVM also exits when the process that
 * started it is gone, so that stopping only Maven stops the cluster.
 *
 * Harness settings ({@link HarnessSettings}) come from the build; override with {@code -Dkpipe.it.*=...}.
 */
public final class ClusterMain {
    private ClusterMain() {}

    /**
     * Runs the CLI.
     *
     * @param args see the class documentation
     * @throws InterruptedException never in practice: the main thread waits until the JVM exits
     */
    public static void main(String[] args) throws InterruptedException {
        ClusterSpec.Builder b = ClusterSpec.builder().name("cli");
        int nodes = 1;
        int slowAcksMs = 0;
        boolean exitWithParent = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--nodes" -> nodes = Integer.parseInt(value(args, ++i, a));
                case "--slow-acks" -> slowAcksMs = Integer.parseInt(value(args, ++i, a));
                case "--kpipe" -> b.kpipe(parseBoolean(value(args, ++i, a)));
                case "--no-plugin" -> b.installPlugin(false);
                case "--heap" -> b.heap(value(args, ++i, a));
                case "--sasl-scram" -> b.saslScramListener(true);
                case "--kafka-version" -> b.kafkaVersion(value(args, ++i, a));
                case "--zookeeper" -> b.zookeeper(true);
                case "--javaagent" -> b.javaagent(true);
                case "--kafka-opts" -> b.kafkaOpts(value(args, ++i, a).trim().split("\\s+"));
                case "--config" -> b.config(value(args, ++i, a));
                case "--exit-with-parent" -> exitWithParent = true;
                case "-h", "--help" -> {
                    usage();
                    return;
                }
                default -> {
                    System.err.println("unknown argument: " + a);
                    usage();
                    System.exit(2);
                }
            }
        }
        if (exitWithParent) {
            ProcessHandle.current()
                    .parent()
                    .ifPresent(p -> ParentWatchdog.watch(p.pid(), "the process that started it (pid " + p.pid() + ")"));
        }
        if (slowAcksMs > 0) {
            nodes = Math.max(nodes, 2);
            b.nodeConfig(2, "replica.fetch.min.bytes", Integer.toString(1_000_000_000));
            b.nodeConfig(2, "replica.fetch.wait.max.ms", Integer.toString(slowAcksMs));
        }
        b.nodes(nodes);
        ClusterSpec spec = b.build();
        HarnessSettings settings = HarnessSettings.load();
        // No own shutdown hook: the harness's hook stops every open cluster (brokers first) when the JVM exits.
        Cluster cluster = Cluster.create(spec, settings);
        cluster.start();
        if (slowAcksMs > 0) {
            try {
                cluster.admin()
                        .createTopics(List.of(new NewTopic("demo", Map.of(0, List.of(1, 2)))
                                .configs(Map.of("min.insync.replicas", "2"))))
                        .all()
                        .get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                System.err.println("creating topic demo failed: " + e);
            }
        }

        String bs = cluster.bootstrapServers();
        String tool = settings.javaExecutable() + " -Dlog4j2.configurationFile=" + cluster.toolsLog4jConfig() + " -cp '"
                + cluster.kafkaHome().resolve("libs") + "/*' ";
        StringBuilder out = new StringBuilder();
        out.append("\nKafka ")
                .append(cluster.kafkaVersion())
                .append(" cluster up: ")
                .append(spec.nodes())
                .append(" node(s), ")
                .append(
                        spec.installPlugin()
                                ? "kpipe " + settings.pluginVersion() + " installed, kpipe.enable="
                                        + spec.kpipeEnabled()
                                : "stock (no kpipe)")
                .append(
                        slowAcksMs > 0
                                ? ", slow acks: node 2 acknowledges every " + slowAcksMs + " ms (topic demo on"
                                        + " nodes 1,2, min.insync.replicas=2)"
                                : "")
                .append("\n\nbootstrap.servers=")
                .append(bs)
                .append('\n');
        if (spec.saslScram()) {
            out.append("SASL_PLAINTEXT (SCRAM-SHA-512) bootstrap.servers=")
                    .append(cluster.saslClientConfig("u", "p").get("bootstrap.servers"))
                    .append(" (create users with kafka-configs --alter --add-config 'SCRAM-SHA-512=[password=...]')\n");
        }
        for (KafkaNode n : cluster.nodes()) {
            out.append("  ")
                    .append(n)
                    .append("  jmx ")
                    .append(n.jmxServiceUrl())
                    .append("  log ")
                    .append(n.logFile())
                    .append('\n');
        }
        out.append("\nTry (from another terminal):\n")
                .append("  ")
                .append(tool)
                .append("org.apache.kafka.tools.ProducerPerformance --topic demo")
                // The same modest acks=all load in every mode: with slow acks it shows the gain, without it it is a
                // smoke test.
                .append(" --num-records 5000 --record-size 1024 --throughput -1 --producer-props acks=all"
                        + " max.in.flight.requests.per.connection=5 bootstrap.servers=")
                .append(bs)
                .append('\n')
                .append("  ")
                .append(tool)
                .append("org.apache.kafka.tools.ConsoleProducer --bootstrap-server ")
                .append(bs)
                .append(" --topic demo\n")
                .append("  ")
                .append(tool)
                .append("org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server ")
                .append(bs)
                .append(" --topic demo --from-beginning\n");
        if (spec.installPlugin() && spec.kpipeEnabled()) { // kpipe's MBeans exist once kpipe is enabled and installed
            // With --slow-acks node 1 leads topic demo (the first replica of its assignment): its dump shows the
            // producer.
            for (String mbean : List.of("kpipe-metrics", "kpipe-connections")) {
                out.append("  ")
                        .append(tool)
                        .append("org.apache.kafka.tools.JmxTool --jmx-url ")
                        .append(cluster.nodes().get(0).jmxServiceUrl())
                        .append(" --object-name kafka.server:type=")
                        .append(mbean)
                        .append(" --one-time true\n");
            }
        } else if (spec.installPlugin()) {
            out.append(
                    "  (kpipe.enable=false: kafka.server:type=kpipe-metrics appears once kpipe.enable is set to true)\n");
        }
        out.append("\nCtrl-C stops the cluster.\n");
        System.out.print(out);
        System.out.flush();
        new CountDownLatch(1).await(); // until Ctrl-C
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    private static boolean parseBoolean(String v) {
        if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException("expected true or false: " + v);
        }
        return Boolean.parseBoolean(v);
    }

    private static void usage() {
        System.err.println(
                "usage: ClusterMain [--nodes N] [--kpipe true|false] [--no-plugin] [--heap 1g] [--sasl-scram]"
                        + " [--kafka-version V] [--zookeeper] [--javaagent] [--kafka-opts \"OPTS\"] [--slow-acks W_MS]"
                        + " [--config key=value | --config nodeId:key=value]... [--exit-with-parent]");
    }
}
