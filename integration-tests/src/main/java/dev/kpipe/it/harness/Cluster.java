// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KRaft cluster of 1..n Kafka nodes running as child JVMs on 127.0.0.1, laid out from a Kafka distribution ({@link
 * #kafkaHome()}: the spec's, else {@link HarnessSettings#kafkaHome()}) with, if the spec says so, the kpipe jar
 * dropped into its {@code libs/}.
 *
 * <p>Folder layout ({@link #dir()}, under {@code kpipe.it.work.dir}): {@code libs/} (symlinks to the distribution's
 * jars plus a copy of the kpipe jar), {@code node-<id>/} with {@code server.properties}, {@code log4j2.xml}, {@code
 * data/}, {@code server.log} and {@code console.log}, and {@code tls/} when the spec has TLS listeners. {@link #close()}
 * deletes {@code data/}, {@code libs/} and {@code tls/} and keeps configs and logs.
 *
 * <p>Every open cluster is closed by a JVM shutdown hook if the JVM exits first. Methods are meant for one
 * controlling thread (the test thread); lifecycle methods are synchronized.
 *
 * <p>The work is done by {@link ClusterLayout} (files), {@link NodeGroup} (all nodes at once), {@link Topics} and
 * {@link ClientConfigs}; this class holds the cluster's state and its public API.
 */
public final class Cluster implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);

    private final ClusterSpec spec;
    private final HarnessSettings settings;
    private final Path dir;
    private final String clusterId;
    private final List<KafkaNode> nodes;
    /** The ZooKeeper server in ZooKeeper mode, else {@code null}. */
    private final ZooKeeperServer zooKeeper;

    private Admin admin;
    private boolean closed;
    /** The generated TLS material when the spec has TLS listeners, else {@code null}. */
    private TestCertificates certificates;

    private Cluster(ClusterSpec spec, HarnessSettings settings) {
        this.spec = spec;
        this.settings = settings;
        this.clusterId = Uuid.randomUuid().toString();
        this.dir = ClusterLayout.newDir(spec, settings);
        List<KafkaNode> list = new ArrayList<>();
        for (int id = 1; id <= spec.nodes(); id++) {
            list.add(new KafkaNode(this, id, id == 1, dir.resolve("node-" + id)));
        }
        this.nodes = Collections.unmodifiableList(list);
        this.zooKeeper =
                spec.zookeeper() || settings.zookeeper() ? new ZooKeeperServer(this, dir.resolve("zookeeper")) : null;
    }

    /**
     * @return whether the cluster runs in ZooKeeper mode ({@link ClusterSpec#zookeeper()} or {@link
     *     HarnessSettings#zookeeper()}): brokers only, with {@code zookeeper.connect}
     */
    public boolean zookeeperMode() {
        return zooKeeper != null;
    }

    /**
     * Lays out a cluster (folders, libs, configs) without starting it.
     *
     * @param spec what to run
     * @return the cluster, not started; close it
     * @throws IllegalStateException if the distribution or (when installing kpipe) the plugin jar is missing
     */
    public static Cluster create(ClusterSpec spec) {
        return create(spec, HarnessSettings.load());
    }

    /**
     * Lays out a cluster with the given settings without starting it.
     *
     * @param spec what to run
     * @param settings where the distribution and plugin jar are
     * @return the cluster, not started; close it
     */
    public static Cluster create(ClusterSpec spec, HarnessSettings settings) {
        Cluster c = new Cluster(spec, settings);
        Reaper.register(c);
        try {
            c.layOut();
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * Lays out and {@link #start() starts} a cluster.
     *
     * @param spec what to run
     * @return the started, ready cluster; close it
     */
    public static Cluster start(ClusterSpec spec) {
        Cluster c = create(spec);
        try {
            c.start();
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
        return c;
    }

    private void layOut() {
        ClusterLayout.layOutLibs(this);
        if (spec.tls()) {
            certificates = TestCertificates.generate(dir.resolve("tls"));
        }
        for (KafkaNode n : nodes) {
            n.storage()
                    .writeConfig(
                            BrokerConfig.of(spec, nodes, zooKeeper, certificates, n, settings.networkEventListener()));
        }
    }

    /**
     * Formats every node's storage that is not yet formatted (in parallel), starts all node JVMs and waits until every
     * node sees every broker registered. Typically takes a few seconds.
     *
     * @throws IllegalStateException if a node fails to start or is not ready within {@code
     *     kpipe.it.start.timeout.seconds}; the message has the tail of its log
     */
    public synchronized void start() {
        ensureOpen();
        long t0 = System.nanoTime();
        if (zooKeeper != null) {
            zooKeeper.start(settings.startTimeout());
        }
        NodeGroup.startAll(nodes, zooKeeper == null, kafkaVersion());
        awaitReady();
        LOG.info(
                "{}: {} node(s) ready in {} ms, bootstrap.servers={} (logs in {})",
                spec.name(),
                nodes.size(),
                (System.nanoTime() - t0) / 1_000_000,
                bootstrapServers(),
                dir);
    }

    /**
     * Waits until every running node answers and sees every running node as a registered broker (one waiting thread
     * per node).
     *
     * @throws IllegalStateException if that does not happen within {@code kpipe.it.start.timeout.seconds}
     */
    public void awaitReady() {
        NodeGroup.awaitReady(nodes, runningIds(), settings.startTimeout(), this);
    }

    /**
     * Stops all nodes gracefully: brokers first (in parallel), then the controller node. The cluster can be started
     * again. Blocks for at most about 2 x 30 s.
     */
    public synchronized void stop() {
        NodeGroup.stopAll(nodes, zooKeeper, Duration.ofSeconds(30));
    }

    /**
     * Creates topics and waits until every partition is served by its leader (see {@link #awaitTopicsReady}).
     *
     * @param topics the topics
     * @param timeout how long creation plus readiness may take
     * @throws IllegalStateException on failure or timeout
     */
    public void createTopics(Collection<NewTopic> topics, Duration timeout) {
        Topics.create(this::admin, topics, timeout);
    }

    /**
     * Creates a topic and waits until every partition is served by its leader, for at most 60 s.
     *
     * @param name topic name
     * @param partitions partition count
     * @param replicationFactor replication factor (at most the node count)
     */
    public void createTopic(String name, int partitions, int replicationFactor) {
        createTopics(List.of(new NewTopic(name, partitions, (short) replicationFactor)), Duration.ofSeconds(60));
    }

    /**
     * Waits until each partition of the topics is served by its leader: a {@code ListOffsets} to every leader succeeds
     * (retried on retriable errors), so that an idempotent producer does not start before the leaders have applied the
     * topic ({@link Topics#awaitReady} says what goes wrong then).
     *
     * @param topics topic names
     * @param timeout how long to wait
     * @throws IllegalStateException on failure or timeout
     */
    public void awaitTopicsReady(Collection<String> topics, Duration timeout) {
        Topics.awaitReady(this::admin, topics, timeout);
    }

    /** @return the client bootstrap addresses of all nodes, e.g. {@code 127.0.0.1:41231,127.0.0.1:38411} */
    public String bootstrapServers() {
        return ClientConfigs.bootstrap(nodes, KafkaNode::bootstrapAddress);
    }

    /**
     * @param user a SCRAM user (create its credentials first, e.g. with {@code Admin.alterUserScramCredentials})
     * @param password its password
     * @return a new mutable client config map for the {@value KafkaNode#SASL_LISTENER} listeners ({@link
     *     ClusterSpec.Builder#saslScramListener}): bootstrap, security protocol, mechanism and JAAS login
     * @throws IllegalStateException if the spec has no SASL listener
     */
    public Map<String, Object> saslClientConfig(String user, String password) {
        return ClientConfigs.sasl(nodes, user, password);
    }

    /**
     * @return a new mutable client config map for the {@value KafkaNode#SSL_LISTENER} listeners ({@link
     *     ClusterSpec.Builder#tlsListeners}): bootstrap, security protocol and the trust store of the cluster's test CA
     *     (hostname verification stays on: the broker certificate names 127.0.0.1)
     * @throws IllegalStateException if the spec has no TLS listeners
     */
    public Map<String, Object> sslClientConfig() {
        return ClientConfigs.ssl(nodes, this::certificates);
    }

    /**
     * @param user a SCRAM user (create its credentials first)
     * @param password its password
     * @return a new mutable client config map for the {@value KafkaNode#SASL_SSL_LISTENER} listeners: bootstrap,
     *     security protocol, mechanism, JAAS login and the trust store of the cluster's test CA
     * @throws IllegalStateException if the spec has no SASL_SSL listeners (TLS and SCRAM)
     */
    public Map<String, Object> saslSslClientConfig(String user, String password) {
        return ClientConfigs.saslSsl(nodes, this::certificates, user, password);
    }

    /**
     * @return the cluster's generated TLS material (CA trust store for clients, broker key store)
     * @throws IllegalStateException if the spec has no TLS listeners
     */
    public TestCertificates certificates() {
        if (certificates == null) {
            throw new IllegalStateException("cluster " + spec.name() + " has no TLS listeners");
        }
        return certificates;
    }

    /** @return a new mutable client config map holding {@code bootstrap.servers}, to add producer/consumer settings to */
    public Map<String, Object> clientConfig() {
        return ClientConfigs.plaintext(nodes);
    }

    /** @return an Admin client for this cluster, created on first use and closed by {@link #close()}; thread-safe */
    public synchronized Admin admin() {
        ensureOpen();
        if (admin == null) {
            admin = Admin.create(clientConfig());
        }
        return admin;
    }

    /**
     * @param id node id, 1-based
     * @return the node
     */
    public KafkaNode node(int id) {
        if (id < 1 || id > nodes.size()) {
            throw new IllegalArgumentException("no node " + id + " in a cluster of " + nodes.size());
        }
        return nodes.get(id - 1);
    }

    /** @return all nodes, node 1 first */
    public List<KafkaNode> nodes() {
        return nodes;
    }

    /** @return the ids of the nodes whose JVM is running */
    public Set<Integer> runningIds() {
        return NodeGroup.runningIds(nodes);
    }

    /** @return the spec this cluster runs */
    public ClusterSpec spec() {
        return spec;
    }

    /**
     * @return whether every node's JVM starts with {@code -javaagent:<libs/kpipe jar>}: {@link ClusterSpec#javaagent()},
     *     or {@link HarnessSettings#javaagent()} for a cluster that installs kpipe
     */
    public boolean javaagent() {
        return spec.javaagent() || (settings.javaagent() && spec.installPlugin());
    }

    /** @return the harness settings in use */
    public HarnessSettings settings() {
        return settings;
    }

    /** @return the KRaft cluster id the storage was formatted with */
    public String clusterId() {
        return clusterId;
    }

    /**
     * @return the distribution folder (holding {@code libs/}) the nodes run: {@link ClusterSpec#kafkaHome()}, else the
     *     laid-out {@link ClusterSpec#kafkaVersion()}, else {@link HarnessSettings#kafkaHome()}
     * @throws IllegalStateException if it is not laid out
     */
    public Path kafkaHome() {
        return ClusterLayout.kafkaHome(spec, settings);
    }

    /** @return the Kafka version of the distribution the nodes run, e.g. {@code 4.4.0} */
    public String kafkaVersion() {
        return ClusterLayout.kafkaVersion(spec, settings);
    }

    /** @return this cluster's folder */
    public Path dir() {
        return dir;
    }

    /** @return the cluster's {@code libs/} folder, the brokers' classpath */
    public Path libsDir() {
        return dir.resolve("libs");
    }

    /** @return the class folder holding {@link dev.kpipe.it.watchdog.ParentWatchdog}, on every node JVM's class path */
    Path watchdogDir() {
        return dir.resolve("watchdog");
    }

    /**
     * @return where the kpipe jar is copied in {@link #libsDir()} (it exists only if the spec {@link
     *     ClusterSpec#installPlugin() installs} kpipe): the path an operator passes to {@code -javaagent:}
     */
    public Path pluginJarInLibs() {
        return libsDir().resolve(settings.pluginJar().getFileName());
    }

    /** @return a log4j2 config for command-line tools run against this cluster (warnings to stderr) */
    public Path toolsLog4jConfig() {
        return dir.resolve("tools-log4j2.xml");
    }

    /**
     * Stops all nodes (see {@link #stop()}), closes clients and deletes data and libs, keeping configs and logs.
     * Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
                admin = null;
            }
            stop();
        } finally {
            Reaper.unregister(this);
            ClusterLayout.deleteData(this, zooKeeper != null, certificates);
        }
    }

    /** Called by the shutdown hook: quick ordered stop, no clean-up of files. */
    void shutdownForExit() {
        NodeGroup.terminateAll(nodes, zooKeeper, Duration.ofSeconds(10));
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("cluster " + spec.name() + " is closed");
        }
    }

    @Override
    public String toString() {
        return "cluster " + spec.name() + " (" + nodes.size() + " node(s)" + (zooKeeper != null ? ", " + zooKeeper : "")
                + ", " + dir + ")";
    }
}
