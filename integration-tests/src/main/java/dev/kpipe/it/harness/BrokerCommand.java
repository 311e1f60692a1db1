// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import dev.kpipe.it.watchdog.ParentWatchdog;
import dev.kpipe.spi.testkit.ContractCheck;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The command line of a {@link KafkaNode}'s broker JVM: heap, GC, log4j2, JMX, tmpdir, KAFKA_OPTS, class path, and the
 * {@link ParentWatchdog} that ends it when the JVM that started it is gone; through {@code taskset -c} when {@link
 * HarnessSettings#brokerCpus()} names CPUs.
 */
final class BrokerCommand {
    private BrokerCommand() {}

    /**
     * The harness JVM's system property (set by the integration tests' failsafe configuration, not by the local
     * cluster or the benchmark runner) that starts every broker with kpipe's SPI contract check on; {@link
     * KafkaClusterExtension} then fails a test class whose brokers logged a violation.
     */
    static final String CONTRACT_CHECK = "kpipe.it.spi.contract.check";

    /** The broker JVM's system property naming the check kpipe passes the broker's events through. */
    private static final String CONTRACT_CHECK_CLASS = "kpipe.spi.contract.check.class";

    /**
     * The end of a node JVM's command line: the class path ({@code libs/*} and the watchdog's class folder) and {@link
     * ParentWatchdog} as main class, watching this JVM and then running {@code mainClass}; the main class's arguments
     * follow. The broker, controller and ZooKeeper JVMs so exit when the harness JVM is gone, however it ended (the
     * harness's shutdown hook stops them when it can run).
     *
     * @param cluster the node's cluster
     * @param mainClass the JVM's real main class, e.g. {@code kafka.Kafka}
     * @return the arguments, from {@code -D}{@value ParentWatchdog#PARENT_PID} to {@code mainClass}
     */
    static List<String> watchdogLaunch(Cluster cluster, String mainClass) {
        return watchdogLaunch(cluster, mainClass, List.of());
    }

    /**
     * @param extraClassPath class path entries after {@code libs/*} and the watchdog's class folder
     * @see #watchdogLaunch(Cluster, String)
     */
    private static List<String> watchdogLaunch(Cluster cluster, String mainClass, List<Path> extraClassPath) {
        StringBuilder classPath =
                new StringBuilder(cluster.libsDir() + "/*" + File.pathSeparator + cluster.watchdogDir());
        for (Path p : extraClassPath) {
            classPath.append(File.pathSeparator).append(p);
        }
        return List.of(
                "-D" + ParentWatchdog.PARENT_PID + "=" + ProcessHandle.current().pid(),
                "-cp",
                classPath.toString(),
                ParentWatchdog.class.getName(),
                mainClass);
    }

    /**
     * @return the SPI test kit's jar (or class folder, in a build that did not package it) on this JVM's class path:
     *     the broker loads {@link ContractCheck} from there, and kpipe's SPI from kpipe's jar in {@code libs/}
     * @throws IllegalStateException if its location is unknown
     */
    private static Path testKit() {
        try {
            return Path.of(ContractCheck.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        } catch (java.net.URISyntaxException | RuntimeException e) {
            throw new IllegalStateException("cannot locate the SPI test kit (kpipe-spi-testkit) for the brokers", e);
        }
    }

    /**
     * @return {@code java ... dev.kpipe.it.watchdog.ParentWatchdog kafka.Kafka server.properties} for the node, as {@link
     *     ProcessBuilder} takes it
     */
    static List<String> of(Cluster cluster, KafkaNode node) {
        Path dir = node.dir();
        int jmxPort = node.jmxPort();
        int id = node.id();
        List<String> cmd = new ArrayList<>();
        HarnessSettings s = cluster.settings();
        s.brokerCpus().ifPresent(cpus -> cmd.addAll(List.of("taskset", "-c", cpus))); // taskset execs java: same pid
        cmd.add(s.javaExecutable().toString());
        String heap = cluster.spec().heap() != null ? cluster.spec().heap() : s.heap();
        cmd.add("-Xmx" + heap);
        // GC settings of Kafka's kafka-run-class.sh.
        cmd.addAll(List.of(
                "-XX:+UseG1GC",
                "-XX:MaxGCPauseMillis=20",
                "-XX:InitiatingHeapOccupancyPercent=35",
                "-XX:+ExplicitGCInvokesConcurrent",
                "-Djava.awt.headless=true"));
        cmd.add("-Dlog4j2.configurationFile=" + dir.resolve("log4j2.xml"));
        cmd.add("-Dkafka.logs.dir=" + dir);
        cmd.addAll(List.of(
                "-Dcom.sun.management.jmxremote",
                "-Dcom.sun.management.jmxremote.host=127.0.0.1",
                "-Dcom.sun.management.jmxremote.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.rmi.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.authenticate=false",
                "-Dcom.sun.management.jmxremote.ssl=false",
                "-Djava.rmi.server.hostname=127.0.0.1"));
        cmd.add("-Djava.io.tmpdir=" + node.tmpDir());
        cmd.addAll(Arrays.asList(s.extraJvmOptions()));
        // KAFKA_OPTS of this cluster (kafka-run-class.sh passes them to java as they are).
        if (cluster.javaagent()) {
            cmd.add("-javaagent:" + cluster.pluginJarInLibs());
        }
        for (String option : cluster.spec().kafkaOpts()) { // {node} stands for this node's id (a port per node, say)
            cmd.add(option.replace(ClusterSpec.NODE_PLACEHOLDER, Integer.toString(id)));
        }
        boolean contractCheck =
                Boolean.getBoolean(CONTRACT_CHECK) && cluster.spec().installPlugin();
        if (contractCheck) {
            // the integration tests: every event of the broker passes through the SPI's test kit (ContractCheck)
            cmd.add("-D" + CONTRACT_CHECK_CLASS + "=" + ContractCheck.class.getName());
        }
        cmd.add("-Dkpipe.it.node=" + cluster.spec().name() + "/" + id); // marks the process in ps output
        cmd.addAll(watchdogLaunch(cluster, "kafka.Kafka", contractCheck ? List.of(testKit()) : List.of()));
        cmd.add(node.configFile().toString());
        return cmd;
    }
}
