package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RetriableException;
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
 * deletes {@code data/}, {@code libs/} and {@code tls/} and
 * keeps configs and logs.
 *
 * <p>Every open cluster is closed by a JVM shutdown hook if the JVM exits first. Methods are meant for one
 * controlling thread (the test thread); lifecycle methods are synchronized.
 */
public final class Cluster implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

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
        this.dir = settings.workDir()
                .resolve(spec.name() + "-" + LocalDateTime.now().format(TS) + "-"
                        + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet());
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
        Path home = kafkaHome();
        try {
            Files.createDirectories(libsDir());
            try (Stream<Path> jars = Files.list(home.resolve("libs"))) {
                for (Path jar : (Iterable<Path>) jars::iterator) {
                    Files.createSymbolicLink(libsDir().resolve(jar.getFileName()), jar.toAbsolutePath());
                }
            }
            if (spec.installPlugin()) {
                Path plugin = settings.pluginJar();
                if (!Files.isRegularFile(plugin)) {
                    throw new IllegalStateException("kpipe jar not found at " + plugin
                            + ": build it first (mvn -B package -DskipTests from the project root)");
                }
                Files.copy(plugin, pluginJarInLibs(), StandardCopyOption.COPY_ATTRIBUTES);
            }
            for (Path jar : spec.extraLibs()) {
                if (!Files.isRegularFile(jar)) {
                    throw new IllegalStateException("extra lib not found: " + jar);
                }
                Files.copy(jar, libsDir().resolve(jar.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
            Files.writeString(toolsLog4jConfig(), """
          <?xml version="1.0" encoding="UTF-8"?>
          <!-- For command-line tools run against this cluster: warnings to stderr. -->
          <Configuration status="WARN">
            <Appenders><Console name="stderr" target="SYSTEM_ERR"><PatternLayout pattern="%p %m (%c)%n"/></Console></Appenders>
            <Loggers><Root level="WARN"><AppenderRef ref="stderr"/></Root></Loggers>
          </Configuration>
          """);
        } catch (IOException e) {
            throw new UncheckedIOException("laying out cluster folder " + dir, e);
        }
        if (spec.tls()) {
            certificates = TestCertificates.generate(dir.resolve("tls"));
        }
        for (KafkaNode n : nodes) {
            n.storage().writeConfig(BrokerConfig.of(spec, nodes, zooKeeper, certificates, n));
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
        List<KafkaNode> toFormat = zooKeeper != null
                ? List.of()
                : nodes.stream().filter(n -> !n.storage().isFormatted()).collect(Collectors.toList());
        if (StorageFormatter.canFormatInProcess(kafkaVersion())) {
            toFormat.forEach(n -> n.storage().format());
        } else { // one tool JVM per node, in parallel
            List<Process> formats =
                    toFormat.stream().map(n -> n.storage().launchFormat()).collect(Collectors.toList());
            for (int i = 0; i < toFormat.size(); i++) {
                toFormat.get(i).storage().awaitFormat(formats.get(i));
            }
        }
        for (KafkaNode n : nodes) {
            if (!n.isRunning()) {
                n.startProcess();
            }
        }
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
        Set<Integer> expected = runningIds();
        Duration timeout = settings.startTimeout();
        List<Thread> waiters = new ArrayList<>();
        List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
        for (KafkaNode n : nodes) {
            if (expected.contains(n.id())) {
                Thread t = new Thread(
                        () -> {
                            try {
                                n.awaitReady(expected, timeout);
                            } catch (RuntimeException e) {
                                failures.add(e);
                            }
                        },
                        "kpipe-it-await-node-" + n.id());
                t.start();
                waiters.add(t);
            }
        }
        try {
            // The first node that fails (e.g. exits during start-up) ends the wait of the others at once, instead of
            // them
            // waiting out the whole timeout for a broker that will never register.
            for (Thread t : waiters) {
                while (t.isAlive() && failures.isEmpty()) {
                    t.join(100);
                }
            }
            if (!failures.isEmpty()) {
                RuntimeException first = failures.get(0);
                waiters.forEach(Thread::interrupt);
                for (Thread t : waiters) {
                    t.join();
                }
                failures.remove(first);
                failures.forEach(first::addSuppressed);
                throw first;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + this, e);
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    /**
     * Stops all nodes gracefully: brokers first (in parallel), then the controller node. The cluster can be started
     * again. Blocks for at most about 2 x 30 s.
     */
    public synchronized void stop() {
        stop(Duration.ofSeconds(30));
    }

    private void stop(Duration timeout) {
        List<Thread> stoppers = new ArrayList<>();
        for (KafkaNode n : nodes.subList(1, nodes.size())) {
            Thread t = new Thread(() -> n.stop(timeout), "kpipe-it-stop-node-" + n.id());
            t.start();
            stoppers.add(t);
        }
        for (Thread t : stoppers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                nodes.forEach(KafkaNode::kill);
                return;
            }
        }
        nodes.get(0).stop(timeout);
        if (zooKeeper != null) {
            zooKeeper.stop(timeout);
        }
    }

    /**
     * Creates topics and waits until every partition is served by its leader (see {@link #awaitTopicsReady}).
     *
     * @param topics the topics
     * @param timeout how long creation plus readiness may take
     * @throws IllegalStateException on failure or timeout
     */
    public void createTopics(Collection<NewTopic> topics, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            admin().createTopics(topics).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("creating topics " + topics + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        awaitTopicsReady(
                topics.stream().map(NewTopic::name).collect(Collectors.toList()),
                Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
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
     * (retried while brokers answer {@code NOT_LEADER_OR_FOLLOWER} or {@code UNKNOWN_TOPIC_OR_PARTITION}). {@code CreateTopics} returns when the controller
     * committed the topic, before the leaders' replica managers have applied it; an idempotent producer that starts
     * sending in that window can get {@code NOT_LEADER_OR_FOLLOWER} on its first batch and have a later in-flight batch
     * accepted, after which the retried first batch fails forever with {@code OUT_OF_ORDER_SEQUENCE_NUMBER}.
     *
     * @param topics topic names
     * @param timeout how long to wait
     * @throws IllegalStateException on failure or timeout
     */
    public void awaitTopicsReady(Collection<String> topics, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        try {
            while (true) {
                long ms = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                try {
                    Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
                    admin().describeTopics(topics)
                            .allTopicNames()
                            .get(ms, TimeUnit.MILLISECONDS)
                            .forEach((name, d) -> d.partitions()
                                    .forEach(p ->
                                            latest.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
                    admin().listOffsets(
                                    latest, new ListOffsetsOptions().timeoutMs((int) Math.min(Integer.MAX_VALUE, ms)))
                            .all()
                            .get(ms, TimeUnit.MILLISECONDS);
                    return;
                } catch (ExecutionException e) {
                    // A broker that has not applied the new topic yet answers UNKNOWN_TOPIC_OR_PARTITION: ask again.
                    if (!(e.getCause() instanceof RetriableException)) {
                        throw new IllegalStateException("topics " + topics + " not ready", e);
                    }
                    last = e;
                } catch (TimeoutException e) {
                    last = e;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "topics " + topics + " not ready within " + timeout.toMillis() + " ms", last);
                }
                TimeUnit.MILLISECONDS.sleep(50); // back-off between probes
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** @return the client bootstrap addresses of all nodes, e.g. {@code 127.0.0.1:41231,127.0.0.1:38411} */
    public String bootstrapServers() {
        return nodes.stream().map(KafkaNode::bootstrapAddress).collect(Collectors.joining(","));
    }

    /**
     * @param user a SCRAM user (create its credentials first, e.g. with {@code Admin.alterUserScramCredentials})
     * @param password its password
     * @return a new mutable client config map for the {@value KafkaNode#SASL_LISTENER} listeners ({@link
     *     ClusterSpec.Builder#saslScramListener}): bootstrap, security protocol, mechanism and JAAS login
     * @throws IllegalStateException if the spec has no SASL listener
     */
    public Map<String, Object> saslClientConfig(String user, String password) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                nodes.stream().map(KafkaNode::saslBootstrapAddress).collect(Collectors.joining(",")));
        m.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        m.put("sasl.mechanism", KafkaNode.SASL_MECHANISM);
        m.put(
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user + "\" password=\""
                        + password + "\";");
        return m;
    }

    /**
     * @return a new mutable client config map for the {@value KafkaNode#SSL_LISTENER} listeners ({@link
     *     ClusterSpec.Builder#tlsListeners}): bootstrap, security protocol and the trust store of the cluster's test CA
     *     (hostname verification stays on: the broker certificate names 127.0.0.1)
     * @throws IllegalStateException if the spec has no TLS listeners
     */
    public Map<String, Object> sslClientConfig() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                nodes.stream().map(KafkaNode::sslBootstrapAddress).collect(Collectors.joining(",")));
        m.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        putTrustStore(m);
        return m;
    }

    /**
     * @param user a SCRAM user (create its credentials first)
     * @param password its password
     * @return a new mutable client config map for the {@value KafkaNode#SASL_SSL_LISTENER} listeners: bootstrap,
     *     security protocol, mechanism, JAAS login and the trust store of the cluster's test CA
     * @throws IllegalStateException if the spec has no SASL_SSL listeners (TLS and SCRAM)
     */
    public Map<String, Object> saslSslClientConfig(String user, String password) {
        Map<String, Object> m = saslClientConfig(user, password);
        m.put(
                CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                nodes.stream().map(KafkaNode::saslSslBootstrapAddress).collect(Collectors.joining(",")));
        m.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        putTrustStore(m);
        return m;
    }

    private void putTrustStore(Map<String, Object> m) {
        TestCertificates tls = certificates();
        m.put("ssl.truststore.location", tls.trustStore().toString());
        m.put("ssl.truststore.type", TestCertificates.STORE_TYPE);
        m.put("ssl.truststore.password", tls.password());
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
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return m;
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
        return nodes.stream()
                .filter(KafkaNode::isRunning)
                .map(KafkaNode::id)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** @return the spec this cluster runs */
    public ClusterSpec spec() {
        return spec;
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
        if (spec.kafkaHome() != null) {
            Path home = spec.kafkaHome();
            if (!Files.isDirectory(home.resolve("libs"))) {
                throw new IllegalStateException("no Kafka distribution at " + home + " (libs/ missing)");
            }
            return home;
        }
        return spec.kafkaVersion() != null ? settings.kafkaHome(spec.kafkaVersion()) : settings.kafkaHome();
    }

    /** @return the Kafka version of the distribution the nodes run, e.g. {@code 4.4.0} */
    public String kafkaVersion() {
        if (spec.kafkaHome() == null && spec.kafkaVersion() == null) {
            return settings.kafkaVersion();
        }
        return HarnessSettings.kafkaVersionOf(kafkaHome()).orElse(spec.kafkaVersion());
    }

    /** @return this cluster's folder */
    public Path dir() {
        return dir;
    }

    /** @return the cluster's {@code libs/} folder, the brokers' classpath */
    public Path libsDir() {
        return dir.resolve("libs");
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
            deleteTree(libsDir());
            nodes.forEach(n -> deleteTree(n.dataDir()));
            if (zooKeeper != null) {
                deleteTree(dir.resolve("zookeeper").resolve("data"));
            }
            if (certificates != null) {
                deleteTree(certificates.dir());
            }
        }
    }

    /** Called by the shutdown hook: quick ordered stop, no clean-up of files. */
    void shutdownForExit() {
        List<Thread> stoppers = new ArrayList<>();
        for (KafkaNode n : nodes.subList(1, nodes.size())) {
            Thread t = new Thread(() -> n.terminateForExit(Duration.ofSeconds(10)), "kpipe-it-exit-node-" + n.id());
            t.start();
            stoppers.add(t);
        }
        for (Thread t : stoppers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        nodes.get(0).terminateForExit(Duration.ofSeconds(10));
        if (zooKeeper != null) {
            zooKeeper.stop(Duration.ofSeconds(10));
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("cluster " + spec.name() + " is closed");
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("could not delete {}: {}", root, e.toString());
        }
    }

    @Override
    public String toString() {
        return "cluster " + spec.name() + " (" + nodes.size() + " node(s)" + (zooKeeper != null ? ", " + zooKeeper : "")
                + ", " + dir + ")";
    }
}
