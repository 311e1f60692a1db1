// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static dev.kpipe.it.harness.NodeLogs.read;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import javax.management.MBeanServerConnection;

/**
 * One Kafka node of a {@link Cluster}: a child JVM running {@code kafka.Kafka server.properties} from the cluster's
 * {@code libs/}, with its own folder (config, data, {@code server.log}, {@code console.log}), client listener, JMX port
 * and, for node 1, the controller listener.
 *
 * <p>Ports stay the same across restarts. Lifecycle methods are synchronized; they block the calling thread for at
 * most the stated timeouts. Log accessors can be called from any thread at any time.
 *
 * <p>The work is done by {@link NodeProcess} (the child JVM), {@link NodeStorage} (config files and storage format)
 * and {@link NodeJmx} (the JMX connection); this class holds the node's ports and folders and its public API.
 */
public final class KafkaNode {
    /** Name of the client listener on every node. */
    public static final String CLIENT_LISTENER = "PLAINTEXT";

    /** Name (and security protocol) of the optional SASL client listener ({@link ClusterSpec#saslScram()}). */
    public static final String SASL_LISTENER = "SASL_PLAINTEXT";

    /** The SASL mechanism enabled on {@link #SASL_LISTENER}. */
    public static final String SASL_MECHANISM = "SCRAM-SHA-512";

    /** Name (and security protocol) of the optional TLS client listener ({@link ClusterSpec#tls()}). */
    public static final String SSL_LISTENER = "SSL";

    /** Name (and security protocol) of the optional SASL-over-TLS listener ({@link ClusterSpec#tls()} and SCRAM). */
    public static final String SASL_SSL_LISTENER = "SASL_SSL";

    /** Name of the controller listener (node 1 only). */
    public static final String CONTROLLER_LISTENER = "CONTROLLER";

    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    private final Cluster cluster;
    private final int id;
    private final boolean controller;
    private final int port;
    private final int controllerPort;
    private final int saslPort;
    private final int sslPort;
    private final int saslSslPort;
    private final int jmxPort;
    private final Path dir;

    private final NodeProcess process;
    private final NodeStorage storage;
    private final NodeJmx jmx;

    KafkaNode(Cluster cluster, int id, boolean controller, Path dir) {
        this.cluster = cluster;
        this.id = id;
        this.controller = controller;
        this.dir = dir;
        this.port = Ports.freeLoopbackPort();
        this.controllerPort = controller ? Ports.freeLoopbackPort() : -1;
        this.saslPort = cluster.spec().saslScram() ? Ports.freeLoopbackPort() : -1;
        this.sslPort = cluster.spec().tls() ? Ports.freeLoopbackPort() : -1;
        this.saslSslPort = cluster.spec().tls() && cluster.spec().saslScram() ? Ports.freeLoopbackPort() : -1;
        this.jmxPort = Ports.freeLoopbackPort();
        this.process = new NodeProcess(this);
        this.storage = new NodeStorage(cluster, this);
        this.jmx = new NodeJmx(id, jmxPort);
    }

    /** @return the node id ({@code node.id}), 1-based */
    public int id() {
        return id;
    }

    /** @return true for the combined broker+controller node (node 1) */
    public boolean isController() {
        return controller;
    }

    /** @return the port of the {@code PLAINTEXT} client listener on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return {@code 127.0.0.1:port} of the client listener */
    public String bootstrapAddress() {
        return "127.0.0.1:" + port;
    }

    /** @return the port of the {@value #SASL_LISTENER} listener, or -1 if the spec has none */
    public int saslPort() {
        return saslPort;
    }

    /** @return {@code 127.0.0.1:port} of the {@value #SASL_LISTENER} listener */
    public String saslBootstrapAddress() {
        return address(saslPort, "SASL");
    }

    /** @return the port of the {@value #SSL_LISTENER} listener, or -1 if the spec has none */
    public int sslPort() {
        return sslPort;
    }

    /** @return {@code 127.0.0.1:port} of the {@value #SSL_LISTENER} listener */
    public String sslBootstrapAddress() {
        return address(sslPort, "SSL");
    }

    /** @return the port of the {@value #SASL_SSL_LISTENER} listener, or -1 if the spec has none */
    public int saslSslPort() {
        return saslSslPort;
    }

    /** @return {@code 127.0.0.1:port} of the {@value #SASL_SSL_LISTENER} listener */
    public String saslSslBootstrapAddress() {
        return address(saslSslPort, "SASL_SSL");
    }

    /** @return the port of the {@code CONTROLLER} listener, or -1 if this node is not a controller */
    public int controllerPort() {
        return controllerPort;
    }

    /** @return the JMX remote port on 127.0.0.1 (no authentication, no TLS) */
    public int jmxPort() {
        return jmxPort;
    }

    /** @return the JMX service URL of this node's JVM */
    public String jmxServiceUrl() {
        return jmx.serviceUrl();
    }

    /** @return this node's folder (config, data, logs) */
    public Path dir() {
        return dir;
    }

    /** @return the node's {@code server.properties} */
    public Path configFile() {
        return dir.resolve("server.properties");
    }

    /** @return the data folder ({@code log.dirs}) */
    public Path dataDir() {
        return dir.resolve("data");
    }

    /**
     * @return the broker JVM's {@code java.io.tmpdir}, a folder of its own (so a test sees what the broker writes there,
     *     and a killed broker leaves nothing in the machine's {@code /tmp}); unless {@code KAFKA_OPTS} sets another
     */
    public Path tmpDir() {
        return dir.resolve("tmp");
    }

    /** @return the log4j2 file of the broker ({@code server.log}), appended to across restarts */
    public Path logFile() {
        return dir.resolve("server.log");
    }

    /** @return the file receiving the JVM's stdout and stderr, appended to across restarts */
    public Path consoleFile() {
        return dir.resolve("console.log");
    }

    /** @return the broker config as written to {@link #configFile()} */
    public Properties config() {
        Properties p = new Properties();
        try (var in = Files.newBufferedReader(configFile())) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /** @return the whole {@code server.log} (all starts of this node), or "" if it does not exist yet */
    public String log() {
        return read(logFile(), 0);
    }

    /** @return the part of {@code server.log} written since the last (re)start */
    public String logSinceStart() {
        return process.logSinceStart();
    }

    /** @return the lines of the whole {@code server.log} */
    public List<String> logLines() {
        return log().lines().collect(Collectors.toList());
    }

    /** @return the whole stdout/stderr of the node's JVM */
    public String console() {
        return read(consoleFile(), 0);
    }

    /** @return whether the node's JVM is running */
    public boolean isRunning() {
        return process.isRunning();
    }

    /** @return the process id of the running JVM, or -1 if not running */
    public long pid() {
        return process.pid();
    }

    /** @return the exit code of the JVM's last run, or null if it never ended */
    public synchronized Integer lastExitCode() {
        return process.lastExitCode();
    }

    /**
     * Connects (once per JVM run) to the node's JMX agent.
     *
     * @return a connection to the node JVM's platform MBean server
     * @throws IllegalStateException if the node is not running
     * @throws UncheckedIOException if the connection fails
     */
    public synchronized MBeanServerConnection jmx() {
        if (!isRunning()) {
            throw new IllegalStateException("node " + id + " is not running");
        }
        return jmx.connect();
    }

    /**
     * Starts the node's JVM (formatting its storage first if needed) and waits until it is ready: its client listener
     * answers and it sees every running node of the cluster as a registered broker.
     *
     * @throws IllegalStateException if it is already running, dies during start-up or is not ready within {@code
     *     kpipe.it.start.timeout.seconds}; the message has the tail of its log
     */
    public synchronized void start() {
        startProcess();
        awaitReady(cluster.runningIds(), cluster.settings().startTimeout());
    }

    /**
     * Stops the node gracefully (SIGTERM, controlled shutdown); kills it (SIGKILL) if it has not exited after 30 s.
     *
     * @return the JVM's exit code (143 after SIGTERM), or -1 if it was not running
     */
    public int stop() {
        return stop(STOP_TIMEOUT);
    }

    /**
     * Stops the node gracefully, then forcibly after {@code timeout}.
     *
     * @param timeout how long to wait for a graceful exit
     * @return the JVM's exit code, or -1 if it was not running
     */
    public synchronized int stop(Duration timeout) {
        if (!process.launched()) {
            return -1;
        }
        jmx.close();
        return process.stop(timeout);
    }

    /**
     * Kills the node's JVM with SIGKILL (no shutdown hooks, no controlled shutdown), like {@code kill -9}.
     *
     * @return the JVM's exit code (137), or -1 if it was not running
     */
    public synchronized int kill() {
        if (!process.launched()) {
            return -1;
        }
        jmx.close();
        return process.kill();
    }

    /** Stops the node gracefully, then {@link #start() starts} it again and waits until it is ready. */
    public synchronized void restart() {
        stop();
        start();
    }

    /**
     * Starts the node's JVM expecting it to fail during start-up, and waits until it exits.
     *
     * @param timeout how long the JVM may take to exit
     * @return its exit code and the log and console output of this start
     * @throws AssertionError if the node becomes ready instead, or is still running after {@code timeout} (it is killed)
     */
    public synchronized NodeExit startExpectingFailure(Duration timeout) {
        startProcess();
        try {
            return process.awaitFailure(timeout);
        } catch (AssertionError | IllegalStateException e) { // it killed the JVM: drop a JMX connection as kill() does
            jmx.close();
            throw e;
        }
    }

    // ---- package-private: used by Cluster ----

    /**
     * For the JVM shutdown hook: SIGTERM, wait up to {@code timeout}, then SIGKILL. Takes no lock, so a thread blocked
     * in a lifecycle method cannot hold it up.
     */
    void terminateForExit(Duration timeout) {
        process.terminate(timeout);
    }

    /** @return the node's config files and storage formatting */
    NodeStorage storage() {
        return storage;
    }

    /** Launches the node's JVM (formatting its storage first in KRaft mode, if needed) without waiting for it. */
    synchronized void startProcess() {
        if (isRunning()) {
            throw new IllegalStateException("node " + id + " is already running");
        }
        if (!cluster.zookeeperMode() && !storage.isFormatted()) {
            storage.format();
        }
        process.markLogs();
        process.launch(BrokerCommand.of(cluster, this));
    }

    /**
     * Waits until this node answers on its client listener and sees all {@code expectedIds} as registered brokers.
     *
     * @param expectedIds broker ids that must be visible to this node
     * @param timeout how long to wait
     */
    synchronized void awaitReady(Set<Integer> expectedIds, Duration timeout) {
        process.awaitReady(expectedIds, timeout);
    }

    /** @see NodeLogs#firstErrors */
    static String firstErrors(String text, int lines) {
        return NodeLogs.firstErrors(text, lines);
    }

    private String address(int listenerPort, String listener) {
        if (listenerPort < 0) {
            throw new IllegalStateException("cluster " + cluster.spec().name() + " has no " + listener + " listener");
        }
        return "127.0.0.1:" + listenerPort;
    }

    @Override
    public String toString() {
        return "node " + id + (controller ? " (broker,controller)" : " (broker)") + " " + bootstrapAddress();
    }
}
