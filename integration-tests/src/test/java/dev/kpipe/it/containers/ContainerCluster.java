// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Ports;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.lifecycle.Startables;
import org.testcontainers.utility.DockerImageName;

/**
 * A KRaft cluster of combined broker+controller nodes in containers of {@link KpipeContainers#image}, on a Docker
 * network of its own, with or without kpipe; and the two faults of {@link ContainerFaultIT}: cutting a node off the
 * network ({@code docker network disconnect}) and freezing it ({@code docker pause}).
 *
 * <p>Node {@code i} (1-based) is the container {@code kafka-i} of the network: listeners {@code BROKER} (inter-broker,
 * {@code kafka-i:9093}), {@code CONTROLLER} ({@code kafka-i:9094}) and {@code EXTERNAL}, published on
 * {@code 127.0.0.1:<free port>} and advertised as that address, the only one the test's clients use. JMX is published
 * the same way (same port inside and out, {@code java.rmi.server.hostname=127.0.0.1}) for kpipe's metrics. Not
 * thread-safe: one test thread drives it; {@link #close()} removes containers and network.
 */
final class ContainerCluster implements AutoCloseable {
    /** kpipe's metrics MBean. */
    static final String KPIPE_MBEAN = "kafka.server:type=kpipe-metrics";

    private static final String CLUSTER_ID = "kpipeFaultsClusterAAAA";

    private final Network network;
    private final List<GenericContainer<?>> nodes = new ArrayList<>();
    private final int[] externalPorts;
    private final int[] jmxPorts;
    private final Map<Integer, JMXConnector> jmx = new HashMap<>();

    /**
     * Creates and starts the cluster; returns once every node logged that it started.
     *
     * @param size the number of nodes (all are controllers: a quorum of {@code size})
     * @param kpipe whether the kpipe jar is in {@code libs/} and enabled ({@code false}: stock brokers)
     * @param settings further {@code KAFKA_*} environment of every node (broker settings as the image maps them)
     * @param logs the folder for the nodes' logs ({@link ContainerLogs#folderFor})
     * @param startTimeout how long the start may take
     */
    ContainerCluster(int size, boolean kpipe, Map<String, String> settings, Path logs, Duration startTimeout) {
        DockerImageName image = KpipeContainers.image(kpipe);
        network = Network.builder()
                .createNetworkCmdModifier(cmd -> cmd.withLabels(ContainerLogs.labels()))
                .build();
        externalPorts = IntStream.range(0, size)
                .map(i -> dev.kpipe.it.harness.Ports.freeLoopbackPort())
                .toArray();
        jmxPorts = IntStream.range(0, size)
                .map(i -> dev.kpipe.it.harness.Ports.freeLoopbackPort())
                .toArray();
        String voters = IntStream.rangeClosed(1, size)
                .mapToObj(i -> i + "@kafka-" + i + ":9094")
                .collect(Collectors.joining(","));
        for (int i = 1; i <= size; i++) {
            String alias = "kafka-" + i;
            int external = externalPorts[i - 1];
            int jmxPort = jmxPorts[i - 1];
            Map<String, String> env = new LinkedHashMap<>();
            env.put("CLUSTER_ID", CLUSTER_ID);
            env.put("KAFKA_NODE_ID", Integer.toString(i));
            env.put("KAFKA_PROCESS_ROLES", "broker,controller");
            env.put("KAFKA_LISTENERS", "EXTERNAL://0.0.0.0:9092,BROKER://0.0.0.0:9093,CONTROLLER://0.0.0.0:9094");
            env.put(
                    "KAFKA_ADVERTISED_LISTENERS",
                    "EXTERNAL://127.0.0.1:" + external + ",BROKER://kafka-" + i + ":9093");
            env.put("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "EXTERNAL:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT");
            env.put("KAFKA_INTER_BROKER_LISTENER_NAME", "BROKER");
            env.put("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER");
            env.put("KAFKA_CONTROLLER_QUORUM_VOTERS", voters);
            env.put("KAFKA_LOG_DIRS", "/var/lib/kafka/data");
            env.put("KAFKA_JMX_PORT", Integer.toString(jmxPort));
            env.put("KAFKA_JMX_HOSTNAME", "127.0.0.1");
            env.putAll(settings);
            GenericContainer<?> node = new GenericContainer<>(image)
                    .withNetwork(network)
                    .withNetworkAliases(alias)
                    .withCreateContainerCmdModifier(cmd -> {
                        cmd.withHostName(alias);
                        Ports bindings = new Ports();
                        bindings.bind(ExposedPort.tcp(9092), Ports.Binding.bindIpAndPort("127.0.0.1", external));
                        bindings.bind(ExposedPort.tcp(jmxPort), Ports.Binding.bindIpAndPort("127.0.0.1", jmxPort));
                        cmd.withExposedPorts(ExposedPort.tcp(9092), ExposedPort.tcp(jmxPort));
                        cmd.getHostConfig().withPortBindings(bindings);
                    })
                    .waitingFor(Wait.forLogMessage(".*\\[KafkaRaftServer nodeId=" + i + "\\] Kafka Server started.*", 1)
                            .withStartupTimeout(startTimeout));
            env.forEach(node::withEnv);
            if (kpipe) { // the image has the jar in /opt/kafka/libs/; the two install lines and the agent, as
                // documented
                node.withEnv("KAFKA_METRIC_REPORTERS", "dev.kpipe.plugin.KpipePlugin");
                node.withEnv("KAFKA_KPIPE_ENABLE", "true");
                node.withEnv("KAFKA_OPTS", KpipeContainers.javaagentOption());
            }
            ContainerLogs.keep(node, logs, (kpipe ? "kpipe-" : "stock-") + "kafka-" + i);
            nodes.add(node);
        }
        Startables.deepStart(nodes).join();
    }

    /** @return the number of nodes */
    int size() {
        return nodes.size();
    }

    /** @return the container of node {@code id} (1-based) */
    GenericContainer<?> node(int id) {
        return nodes.get(id - 1);
    }

    /** @return client settings with every node's external address (all on 127.0.0.1) */
    Map<String, Object> clientConfig() {
        Map<String, Object> c = new HashMap<>();
        c.put(
                CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                IntStream.of(externalPorts).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.joining(",")));
        return c;
    }

    /** Cuts node {@code id} off the cluster's network: peers, controllers and clients no longer reach it. */
    void disconnect(int id) {
        docker().disconnectFromNetworkCmd()
                .withNetworkId(network.getId())
                .withContainerId(node(id).getContainerId())
                .exec();
    }

    /** Connects node {@code id} to the network again under its alias (its address may change). */
    void reconnect(int id) {
        docker().connectToNetworkCmd()
                .withNetworkId(network.getId())
                .withContainerId(node(id).getContainerId())
                .withContainerNetwork(new com.github.dockerjava.api.model.ContainerNetwork().withAliases("kafka-" + id))
                .exec();
        closeJmx(id);
    }

    /** Freezes every process of node {@code id} (cgroup freezer): its sockets stay open, nothing answers. */
    void pause(int id) {
        docker().pauseContainerCmd(node(id).getContainerId()).exec();
    }

    /** Thaws node {@code id}. */
    void unpause(int id) {
        docker().unpauseContainerCmd(node(id).getContainerId()).exec();
        closeJmx(id);
    }

    /** @return for each node id, how many partitions of {@code topic} it leads */
    static Map<Integer, Integer> leaderCounts(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get(30, TimeUnit.SECONDS)
                .get(topic);
        Map<Integer, Integer> counts = new HashMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            if (p.leader() != null) {
                counts.merge(p.leader().id(), 1, Integer::sum);
            }
        }
        return counts;
    }

    /**
     * Waits until every partition of {@code topic} has a leader and all {@link #size()} replicas in sync.
     *
     * @return how long it took, in ms
     * @throws AssertionError if that does not happen within {@code timeout}
     */
    long awaitFullIsr(Admin admin, String topic, Duration timeout) throws InterruptedException {
        long t0 = System.nanoTime();
        long end = t0 + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < end) {
            try {
                TopicDescription d = admin.describeTopics(List.of(topic))
                        .allTopicNames()
                        .get(10, TimeUnit.SECONDS)
                        .get(topic);
                if (d.partitions().stream()
                        .allMatch(p -> p.leader() != null && p.isr().size() == size())) {
                    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                }
                last = d.partitions().stream()
                        .map(p -> p.partition() + ":" + p.isr().size())
                        .collect(Collectors.joining(" "));
            } catch (Exception e) {
                last = e.toString();
            }
            TimeUnit.MILLISECONDS.sleep(500); // poll interval
        }
        throw new AssertionError(
                "partitions of " + topic + " not fully in sync within " + timeout.toSeconds() + " s: " + last);
    }

    /**
     * Reads attributes of kpipe's metrics MBean on node {@code id} over its published JMX port (127.0.0.1).
     *
     * @param id the node (1-based)
     * @param attributes metric names, e.g. {@code pipelined-request-total}
     * @return attribute name to value, in the order asked
     * @throws Exception if JMX cannot be reached (a node that is paused or cut off)
     */
    Map<String, Double> kpipeMetrics(int id, List<String> attributes) throws Exception {
        MBeanServerConnection c = jmx(id);
        Map<String, Double> m = new LinkedHashMap<>();
        for (String a : attributes) {
            m.put(a, ((Number) c.getAttribute(new ObjectName(KPIPE_MBEAN), a)).doubleValue());
        }
        return m;
    }

    private MBeanServerConnection jmx(int id) throws IOException {
        JMXConnector c = jmx.get(id);
        if (c == null) {
            JMXServiceURL url =
                    new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPorts[id - 1] + "/jmxrmi");
            c = JMXConnectorFactory.connect(url, Map.of("jmx.remote.x.request.waiting.timeout", 10_000L));
            jmx.put(id, c);
        }
        return c.getMBeanServerConnection();
    }

    private void closeJmx(int id) {
        JMXConnector c = jmx.remove(id);
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // the connection is gone with the fault
            }
        }
    }

    private static DockerClient docker() {
        return DockerClientFactory.instance().client();
    }

    /** Stops and removes every node (unpausing a paused one first) and the network. Never throws. */
    @Override
    public void close() {
        for (int id = 1; id <= nodes.size(); id++) {
            closeJmx(id);
            GenericContainer<?> n = nodes.get(id - 1);
            try {
                if (n.getContainerId() != null
                        && Boolean.TRUE.equals(docker().inspectContainerCmd(n.getContainerId())
                                .exec()
                                .getState()
                                .getPaused())) {
                    unpause(id);
                }
            } catch (RuntimeException e) {
                // already gone
            }
            try {
                n.stop();
            } catch (RuntimeException e) {
                System.err.println("kpipe-it: stopping " + n.getContainerName() + " failed: " + e);
            }
        }
        try {
            network.close();
        } catch (RuntimeException e) {
            System.err.println("kpipe-it: removing network " + network.getId() + " failed: " + e);
        }
    }
}
