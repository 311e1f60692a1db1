// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The options of a {@link ClusterSpec.Builder} that say how the nodes run rather than what the cluster is: the broker
 * heap, the extra SASL and TLS client listeners, the Kafka distribution (version, folder, ZooKeeper mode), and what
 * goes on the broker JVMs' command line and class path ({@code -javaagent}, {@code KAFKA_OPTS}, extra jars).
 *
 * <p>Mutable, not thread-safe: one builder per thread, as {@link ClusterSpec.Builder}. Package-private fields, read
 * once by {@link ClusterSpec}'s constructor. The setters are not {@code final}, so that javac puts public bridges of
 * them into the public {@link ClusterSpec.Builder} (callers in other packages and reflection see them there).
 *
 * @param <B> the builder type the setters return, {@link ClusterSpec.Builder}
 */
abstract class ClusterSpecOptions<B extends ClusterSpecOptions<B>> {
    String heap;
    boolean saslScram;
    boolean tls;
    String kafkaVersion;
    boolean zookeeper;
    Path kafkaHome;
    boolean javaagent;
    final List<String> kafkaOpts = new ArrayList<>();
    final List<Path> extraLibs = new ArrayList<>();

    ClusterSpecOptions() {}

    /** @return this builder, as its own type */
    abstract B self();

    /**
     * @param heap {@code -Xmx} value for each broker JVM, e.g. {@code 512m} or {@code 1g}; null for the default
     * @return this
     */
    public B heap(String heap) {
        this.heap = heap == null || heap.isBlank() ? null : heap.trim();
        return self();
    }

    /**
     * Adds a second client listener on every node, {@value KafkaNode#SASL_LISTENER} on its own free port ({@link
     * KafkaNode#saslPort()}), with {@code sasl.enabled.mechanisms=}{@value KafkaNode#SASL_MECHANISM} and a JAAS
     * config of {@code ScramLoginModule}. The {@value KafkaNode#CLIENT_LISTENER} listener stays the inter-broker one
     * and the controller listener stays PLAINTEXT. No user exists at first: create SCRAM credentials with {@code
     * Admin.alterUserScramCredentials}; connect with {@link Cluster#saslClientConfig}. Default false.
     *
     * @param enabled whether to add the listener
     * @return this
     */
    public B saslScramListener(boolean enabled) {
        this.saslScram = enabled;
        return self();
    }

    /**
     * Adds TLS client listeners on every node, each on its own free port: {@value KafkaNode#SSL_LISTENER} ({@link
     * KafkaNode#sslPort()}) and, with {@link #saslScramListener}, {@value KafkaNode#SASL_SSL_LISTENER} ({@link
     * KafkaNode#saslSslPort()}, SCRAM as on the SASL_PLAINTEXT listener). The cluster generates a test CA and a broker
     * certificate for {@code 127.0.0.1} when it is laid out ({@link TestCertificates}, in {@code tls/} of its folder);
     * connect with {@link Cluster#sslClientConfig} or {@link Cluster#saslSslClientConfig}. No client certificates
     * ({@code ssl.client.auth=none}). Default false.
     *
     * @param enabled whether to add the listeners
     * @return this
     */
    public B tlsListeners(boolean enabled) {
        this.tls = enabled;
        return self();
    }

    /**
     * Runs the nodes on another laid-out Kafka version than the harness default ({@code kpipe.it.kafka.version}):
     * the distribution {@code kafka-<version>/} under {@link HarnessSettings#kafkaDists()}. Test clients are not
     * affected (they are the build's kafka-clients).
     *
     * @param version e.g. {@code 4.2.1}; null or blank for the default
     * @return this
     */
    public B kafkaVersion(String version) {
        this.kafkaVersion = version == null || version.isBlank() ? null : version.trim();
        return self();
    }

    /**
     * Runs the cluster in ZooKeeper mode, which Kafka 3.8 and 3.9 still have (4.0 removed it): a ZooKeeper server
     * from the distribution's own jars in a child JVM ({@code ZooKeeperServerMain} on a free 127.0.0.1 port), every
     * node a broker ({@code broker.id}, {@code zookeeper.connect}, no {@code process.roles}, no controller listener,
     * no storage formatting; one broker is elected controller through ZooKeeper). Default false; {@code
     * -Dkpipe.it.zookeeper=true} turns it on for every cluster (the failsafe execution {@code core-kafka-3.9.1-zk}).
     *
     * @param enabled whether to run in ZooKeeper mode
     * @return this
     */
    public B zookeeper(boolean enabled) {
        this.zookeeper = enabled;
        return self();
    }

    /**
     * Runs the nodes on the Kafka distribution in a folder (holding {@code libs/} as in the official tarball); wins
     * over {@link #kafkaVersion}.
     *
     * @param home the distribution folder; null for the default
     * @return this
     */
    public B kafkaHome(Path home) {
        this.kafkaHome = home == null ? null : home.toAbsolutePath().normalize();
        return self();
    }

    /**
     * Installs kpipe as a Java agent as well: every node's JVM starts with {@code -javaagent:<the cluster's
     * libs/kpipe-plugin-<version>.jar>}, the option an operator puts into {@code KAFKA_OPTS} (Kafka's {@code
     * kafka-run-class.sh} passes it to {@code java}) for a broker JVM that forbids attaching to itself. {@code
     * metric.reporters} and the {@code kpipe.*} settings are written as usual (they still carry the settings). Pair it
     * with {@code kafkaOpts("-XX:+DisableAttachMechanism")} to run a JVM that forbids attach. Default false.
     *
     * @param enabled whether to add the agent option
     * @return this
     */
    public B javaagent(boolean enabled) {
        this.javaagent = enabled;
        return self();
    }

    /**
     * Adds JVM options for every node of this cluster, as an operator sets {@code KAFKA_OPTS}: they go on the {@code
     * java} command line after the harness's own options (heap, GC, JMX, {@code kpipe.it.jvm.opts}), before the
     * class path. {@value ClusterSpec#NODE_PLACEHOLDER} in an option stands for the node's id, so that each node of
     * a cluster on one machine can get a port of its own (e.g. a Prometheus exporter agent on {@code 707{node}}).
     *
     * @param options JVM options, e.g. {@code -XX:+DisableAttachMechanism}; blank ones are ignored
     * @return this
     */
    public B kafkaOpts(String... options) {
        for (String o : options) {
            if (o != null && !o.isBlank()) {
                kafkaOpts.add(o.trim());
            }
        }
        return self();
    }

    /**
     * Copies a jar into the nodes' {@code libs/} (on the broker classpath), as an operator installs a plugin: e.g. a
     * test implementation of a kpipe SPI named in a {@code kpipe.*.class} setting.
     *
     * @param jar the jar
     * @return this
     */
    public B extraLib(Path jar) {
        this.extraLibs.add(jar.toAbsolutePath().normalize());
        return self();
    }
}
