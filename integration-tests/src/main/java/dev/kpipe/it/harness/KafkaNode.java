package dev.kpipe.it.harness;

import static dev.kpipe.it.harness.NodeLogs.log4jConfig;
import static dev.kpipe.it.harness.NodeLogs.read;
import static dev.kpipe.it.harness.NodeLogs.size;
import static dev.kpipe.it.harness.NodeLogs.tail;
import static dev.kpipe.it.harness.ReadinessProbe.probeAdmin;
import static dev.kpipe.it.harness.ReadinessProbe.seesBrokers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Kafka node of a {@link Cluster}: a child JVM running {@code kafka.Kafka server.properties} from the cluster's
 * {@code libs/}, with its own folder (config, data, {@code server.log}, {@code console.log}), client listener, JMX port
 * and, for node 1, the controller listener.
 *
 * <p>Ports stay the same across restarts. Lifecycle methods are synchronized; they block the calling thread for at
 * most the stated timeouts. Log accessors can be called from any thread at any time.
 */
public final class KafkaNode {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaNode.class);

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

    private volatile Process process;
    private long logOffsetAtStart;
    private long consoleOffsetAtStart;
    private JMXConnector jmxConnector;
    private Integer lastExitCode;

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
        if (saslPort < 0) {
            throw new IllegalStateException("cluster " + cluster.spec().name() + " has no SASL listener");
        }
        return "127.0.0.1:" + saslPort;
    }

    /** @return the port of the {@value #SSL_LISTENER} listener, or -1 if the spec has none */
    public int sslPort() {
        return sslPort;
    }

    /** @return {@code 127.0.0.1:port} of the {@value #SSL_LISTENER} listener */
    public String sslBootstrapAddress() {
        if (sslPort < 0) {
            throw new IllegalStateException("cluster " + cluster.spec().name() + " has no SSL listener");
        }
        return "127.0.0.1:" + sslPort;
    }

    /** @return the port of the {@value #SASL_SSL_LISTENER} listener, or -1 if the spec has none */
    public int saslSslPort() {
        return saslSslPort;
    }

    /** @return {@code 127.0.0.1:port} of the {@value #SASL_SSL_LISTENER} listener */
    public String saslSslBootstrapAddress() {
        if (saslSslPort < 0) {
            throw new IllegalStateException("cluster " + cluster.spec().name() + " has no SASL_SSL listener");
        }
        return "127.0.0.1:" + saslSslPort;
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
        return "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi";
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
        return read(logFile(), logOffsetAtStart);
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
        Process p = process;
        return p != null && p.isAlive();
    }

    /** @return the process id of the running JVM, or -1 if not running */
    public long pid() {
        Process p = process;
        return p != null && p.isAlive() ? p.pid() : -1;
    }

    /** @return the exit code of the JVM's last run, or null if it never ended */
    public synchronized Integer lastExitCode() {
        return lastExitCode;
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
        try {
            if (jmxConnector == null) {
                jmxConnector = JMXConnectorFactory.connect(new JMXServiceURL(jmxServiceUrl()), Map.of());
            }
            return jmxConnector.getMBeanServerConnection();
        } catch (IOException e) {
            throw new UncheckedIOException("JMX connection to node " + id + " at " + jmxServiceUrl() + " failed", e);
        }
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
        Process p = process;
        if (p == null) {
            return -1;
        }
        closeJmx();
        try {
            if (p.isAlive()) {
                p.destroy();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("node {} did not stop within {} s; killing it", id, timeout.toSeconds());
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                }
            }
            lastExitCode = p.waitFor();
            process = null;
            return lastExitCode;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping node " + id, e);
        }
    }

    /**
     * Kills the node's JVM with SIGKILL (no shutdown hooks, no controlled shutdown), like {@code kill -9}.
     *
     * @return the JVM's exit code (137), or -1 if it was not running
     */
    public synchronized int kill() {
        Process p = process;
        if (p == null) {
            return -1;
        }
        closeJmx();
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        try {
            lastExitCode = p.waitFor();
            process = null;
            return lastExitCode;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing node " + id, e);
        }
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
        Process p = process;
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Admin probe = probeAdmin(bootstrapAddress(), id)) {
            while (true) {
                if (p.waitFor(200, TimeUnit.MILLISECONDS)) {
                    process = null;
                    lastExitCode = p.exitValue();
                    return new NodeExit(lastExitCode, logSinceStart(), read(consoleFile(), consoleOffsetAtStart));
                }
                if (seesBrokers(probe, Set.of(id)) != null) {
                    String tail = tail(logSinceStart(), 40);
                    kill();
                    throw new AssertionError(
                            "node " + id + " started although it was expected to fail; log tail:\n" + tail);
                }
                if (System.nanoTime() > deadline) {
                    String tail = tail(logSinceStart(), 40);
                    kill();
                    throw new AssertionError("node " + id + " was expected to fail but is still running after "
                            + timeout.toSeconds() + " s; log tail:\n" + tail);
                }
            }
        } catch (InterruptedException e) {
            kill();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    // ---- package-private: used by Cluster ----

    /**
     * For the JVM shutdown hook: SIGTERM, wait up to {@code timeout}, then SIGKILL. Takes no lock, so a thread blocked
     * in a lifecycle method cannot hold it up.
     */
    void terminateForExit(Duration timeout) {
        terminate(process, timeout);
    }

    /**
     * SIGTERM, wait up to {@code timeout}, then SIGKILL (the process and its descendants); a no-op for {@code null} or a
     * process that has exited. Shared by the broker nodes and the ZooKeeper server.
     *
     * @param p a child JVM, or {@code null}
     * @param timeout how long it may take to exit
     */
    static void terminate(Process p, Duration timeout) {
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    void writeConfig(Map<String, String> config) {
        try {
            Files.createDirectories(dir);
            try (Writer w = Files.newBufferedWriter(configFile(), StandardCharsets.UTF_8)) {
                w.write("# node " + id + " of cluster " + cluster.spec().name() + ", written by the kpipe harness\n");
                for (Map.Entry<String, String> e : config.entrySet()) {
                    w.write(e.getKey() + "=" + e.getValue().replace("\\", "\\\\") + "\n");
                }
            }
            Files.writeString(dir.resolve("log4j2.xml"), log4jConfig(id, logFile()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    boolean isFormatted() {
        return Files.exists(dataDir().resolve("meta.properties"));
    }

    /**
     * Formats this node's storage with {@code kafka.tools.StorageTool format} (what {@code kafka-storage.sh format}
     * runs): in this JVM if it has the same Kafka version on its classpath (saves a JVM start), else in a child JVM.
     */
    void format() {
        if (!StorageFormatter.formatInProcess(this, cluster.kafkaVersion())) {
            awaitFormat(launchFormat());
        }
    }

    /** @return the arguments of {@code kafka.tools.StorageTool} that format this node */
    List<String> formatArgs() {
        return List.of(
                "format",
                "--cluster-id",
                cluster.clusterId(),
                "--config",
                configFile().toString());
    }

    /** Launches {@code kafka.tools.StorageTool format} in a child JVM; the caller waits via {@link #awaitFormat}. */
    Process launchFormat() {
        List<String> cmd = new ArrayList<>();
        cmd.add(cluster.settings().javaExecutable().toString());
        cmd.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        cmd.add("-Dlog4j2.configurationFile=" + cluster.toolsLog4jConfig());
        cmd.addAll(List.of("-cp", cluster.libsDir() + "/*", "kafka.tools.StorageTool"));
        cmd.addAll(formatArgs());
        try {
            return new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("format.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void awaitFormat(Process format) {
        try {
            if (!format.waitFor(2, TimeUnit.MINUTES)) {
                format.destroyForcibly();
                throw new IllegalStateException("formatting node " + id + " timed out");
            }
        } catch (InterruptedException e) {
            format.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (format.exitValue() != 0 || !isFormatted()) {
            throw new IllegalStateException("formatting node " + id + " failed (exit " + format.exitValue() + "):\n"
                    + read(dir.resolve("format.log"), 0));
        }
    }

    synchronized void startProcess() {
        if (isRunning()) {
            throw new IllegalStateException("node " + id + " is already running");
        }
        if (!cluster.zookeeperMode() && !isFormatted()) {
            format();
        }
        logOffsetAtStart = size(logFile());
        consoleOffsetAtStart = size(consoleFile());
        List<String> cmd = BrokerCommand.of(cluster, this);
        try {
            Files.createDirectories(tmpDir());
            Files.writeString(dir.resolve("command.txt"), String.join(" ", cmd) + "\n");
            process = new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(
                            ProcessBuilder.Redirect.appendTo(consoleFile().toFile()))
                    .start();
            process.getOutputStream().close(); // the broker reads nothing from stdin
        } catch (IOException e) {
            throw new UncheckedIOException("could not start node " + id, e);
        }
        lastExitCode = null;
        LOG.debug("node {} started as pid {}", id, process.pid());
    }

    /**
     * Waits until this node answers on its client listener and sees all {@code expectedIds} as registered brokers.
     *
     * @param expectedIds broker ids that must be visible to this node
     * @param timeout how long to wait
     */
    synchronized void awaitReady(Set<Integer> expectedIds, Duration timeout) {
        Process p = process;
        if (p == null) {
            throw new IllegalStateException("node " + id + " is not running");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        try (Admin probe = probeAdmin(bootstrapAddress(), id)) {
            while (true) {
                if (!p.isAlive()) {
                    process = null;
                    lastExitCode = p.exitValue();
                    throw new IllegalStateException("node " + id + " exited with code " + lastExitCode
                            + " during start-up (" + logFile() + "); first errors:\n" + firstErrors(logSinceStart(), 12)
                            + "\nlog tail:\n" + tail(logSinceStart(), 40)
                            + "\nconsole tail:\n" + tail(read(consoleFile(), consoleOffsetAtStart), 20));
                }
                Set<Integer> seen;
                try {
                    seen = seesBrokers(probe, expectedIds);
                } catch (RuntimeException e) {
                    seen = null;
                    last = e;
                }
                if (seen != null) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("node " + id + " not ready within " + timeout.toSeconds()
                            + " s (expected" + " brokers " + expectedIds + ", last error " + last + "); log tail:\n"
                            + tail(logSinceStart(), 40));
                }
                p.waitFor(100, TimeUnit.MILLISECONDS); // pause between probes; returns at once if the JVM dies
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for node " + id, e);
        }
    }

    // ---- internals ----

    private synchronized void closeJmx() {
        if (jmxConnector != null) {
            try {
                jmxConnector.close();
            } catch (IOException e) {
                LOG.debug("closing JMX connection to node {}: {}", id, e.toString());
            }
            jmxConnector = null;
        }
    }

    /**
     * The first lines of a log that say why a JVM died: ERROR and FATAL lines and the exception lines under them.
     *
     * @param text the log
     * @param lines at most this many lines
     * @return those lines, or "(none)"
     */
    static String firstErrors(String text, int lines) {
        List<String> errors = text.lines()
                .filter(l -> l.contains("] ERROR ")
                        || l.contains("] FATAL ")
                        || l.startsWith("Caused by:")
                        || l.matches("^[a-z][\\w.$]*(Exception|Error)(: .*)?$"))
                .limit(lines)
                .collect(Collectors.toList());
        return errors.isEmpty() ? "(none)" : String.join("\n", errors);
    }

    @Override
    public String toString() {
        return "node " + id + (controller ? " (broker,controller)" : " (broker)") + " " + bootstrapAddress();
    }
}
