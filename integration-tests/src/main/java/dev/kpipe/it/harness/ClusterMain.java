// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import dev.kpipe.it.watchdog.ParentWatchdog;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Command line: starts a cluster, prints how to connect and what to try ({@link ClusterBanner}), runs until stopped,
 * then stops it. {@link #USAGE} lists the options ({@code --help} prints it).
 *
 * <p>{@code --slow-acks W} makes acknowledging an acks=all produce slow, as benchmark scenario S1 does: at least 2
 * nodes, node 2 (the follower) fetches with {@code replica.fetch.min.bytes} far above what is produced and {@code
 * replica.fetch.wait.max.ms=W}, and a topic {@code demo} is created on nodes 1 and 2 with {@code
 * min.insync.replicas=2}, led by node 1. On a fast local cluster an acks=all produce is answered within about a
 * millisecond, so pipelining barely shows; with slow acks one producer connection is capped near 1/W requests/s on
 * stock Kafka and near {@code max.in.flight}/W with kpipe.
 *
 * <p>Stopping: Ctrl-C or SIGTERM runs the harness's shutdown hook, which stops the nodes; the nodes also exit on their
 * own once this JVM is gone ({@link ParentWatchdog}), so SIGKILL leaves no broker behind. With {@code
 * --exit-with-parent} (the {@code -Pcluster} Maven profile passes it) this JVM also exits when the process that
 * started it is gone, so that stopping only Maven stops the cluster.
 *
 * <p>Harness settings ({@link HarnessSettings}) come from the build; override with {@code -Dkpipe.it.*=...}.
 */
public final class ClusterMain {
    /** What {@code --help} prints. */
    static final String USAGE = """
            usage: ClusterMain [OPTION]...
            Starts a local Kafka cluster from this checkout's build (each node a child JVM on 127.0.0.1; in KRaft mode
            node 1 is broker and controller, the others brokers), prints how to connect and what to try, and runs
            until stopped (Ctrl-C, SIGTERM, or with --exit-with-parent its launcher stopping).
              --nodes N             number of nodes (default 1; --slow-acks needs and makes at least 2)
              --kpipe true|false    kpipe in libs/ with kpipe.enable=true or false (default true)
              --no-plugin           stock Kafka: no kpipe jar in libs/, no kpipe settings
              --config KEY=VALUE    a server.properties setting for every node; ID:KEY=VALUE for node ID only;
                                    repeatable (a bad kpipe.* value fails the node's start, naming the key)
              --slow-acks W         node 2 acknowledges acks=all produce every W ms; creates topic demo on nodes 1,2
                                    with min.insync.replicas=2
              --heap SIZE           broker heap (-Xmx), e.g. 1g (default 512m)
              --kafka-version V     another laid-out Kafka, integration-tests/target/kafka-V (3.8.1 to 4.3.1)
              --zookeeper           ZooKeeper mode (Kafka 3.8 and 3.9 only)
              --javaagent           also pass the kpipe jar as -javaagent (for JVMs that forbid attach)
              --kafka-opts "OPTS"   JVM options for every node, as KAFKA_OPTS ({node} stands for the node id)
              --sasl-scram          a SASL_PLAINTEXT (SCRAM-SHA-512) listener beside PLAINTEXT
              --exit-with-parent    exit when the process that started this one is gone (-Pcluster passes it)
              -h, --help            this text
            """;

    private ClusterMain() {}

    /**
     * Runs the CLI.
     *
     * @param args see {@link #USAGE}
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
                    System.out.print(USAGE);
                    return;
                }
                default -> {
                    System.err.println("unknown argument: " + a);
                    System.err.print(USAGE);
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
        // No own shutdown hook: the harness's hook stops every open cluster (brokers first) when the JVM exits, and
        // says
        // so on the terminal (Maven, whose pipe carries this JVM's output, is gone after a Ctrl-C).
        Reaper.reportTo(terminalOrStderr());
        Cluster cluster = Cluster.create(spec, settings);
        try {
            cluster.start();
        } catch (IllegalStateException e) { // a node exited or was not ready: the message has its first errors
            System.err.println("The cluster did not start: " + e.getMessage());
            System.exit(1);
        }
        if (slowAcksMs > 0) {
            try {
                cluster.admin()
                        .createTopics(List.of(new NewTopic("demo", Map.of(0, List.of(1, 2)))
                                .configs(Map.of("min.insync.replicas", "2"))))
                        .all()
                        .get(60, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                System.err.println("creating topic demo failed: " + e);
            }
        }
        System.out.print(ClusterBanner.of(cluster, slowAcksMs));
        System.out.flush();
        new CountDownLatch(1).await(); // until the JVM exits
    }

    /** @return the controlling terminal ({@code /dev/tty}) if this JVM has one, else stderr */
    private static PrintStream terminalOrStderr() {
        try {
            return new PrintStream(new FileOutputStream("/dev/tty"), true, StandardCharsets.UTF_8);
        } catch (IOException | SecurityException e) { // no controlling terminal (an IDE, CI, nohup)
            return System.err;
        }
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
}
