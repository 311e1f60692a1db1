// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The ZooKeeper server of a ZooKeeper-mode cluster (Kafka 3.8/3.9: brokers built by {@code kafka.server.KafkaServer}
 * with {@code zookeeper.connect} and no {@code process.roles}): one standalone
 * {@code org.apache.zookeeper.server.ZooKeeperServerMain} in a child JVM, run from the distribution's own {@code libs/}
 * (the tarball ships the ZooKeeper jar its brokers use), on a free 127.0.0.1 port, with its data in the cluster's
 * folder. Its admin HTTP server is off. Marked like the broker JVMs ({@code -Dkpipe.it.node=}, {@code
 * -Dkafka.logs.dir=}), so the {@link Reaper} also kills it when orphaned. Thread-safe.
 */
final class ZooKeeperServer {
    private final Cluster cluster;
    private final Path dir;
    private final int port;
    private Process process;

    ZooKeeperServer(Cluster cluster, Path dir) {
        this.cluster = cluster;
        this.dir = dir;
        this.port = Ports.freeLoopbackPort();
    }

    /** @return the brokers' {@code zookeeper.connect} */
    String connectString() {
        return "127.0.0.1:" + port;
    }

    /** @return the server's console output (its log, at WARN) */
    Path logFile() {
        return dir.resolve("zookeeper.log");
    }

    synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Starts the server if it is not running and waits until it accepts connections.
     *
     * @param timeout how long it may take
     * @throws IllegalStateException if it exits or does not listen in time; the message has its log's tail
     */
    synchronized void start(Duration timeout) {
        if (isRunning()) {
            return;
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(cluster.settings().javaExecutable().toString());
        cmd.addAll(List.of("-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        cmd.add("-Dlog4j2.configurationFile=" + cluster.toolsLog4jConfig());
        cmd.add("-Dzookeeper.admin.enableServer=false");
        cmd.add("-Dkafka.logs.dir=" + dir);
        cmd.add("-Dkpipe.it.node=" + cluster.spec().name() + "/zookeeper");
        cmd.addAll(BrokerCommand.watchdogLaunch(cluster, "org.apache.zookeeper.server.ZooKeeperServerMain"));
        cmd.addAll(List.of(Integer.toString(port), dir.resolve("data").toString()));
        try {
            Files.createDirectories(dir.resolve("data"));
            Files.writeString(dir.resolve("command.txt"), String.join(" ", cmd) + "\n");
            process = new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()))
                    .start();
            process.getOutputStream().close();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start ZooKeeper", e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "ZooKeeper exited with code " + process.exitValue() + "; log:\n" + log());
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    process.destroyForcibly();
                    throw new IllegalStateException("ZooKeeper did not listen on " + connectString() + " within "
                            + timeout.toSeconds() + " s; log:\n" + log());
                }
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /**
     * Stops the server (SIGTERM, then SIGKILL after {@code timeout}); a no-op if it is not running. Takes no lock, so
     * the JVM shutdown hook can call it too.
     *
     * @param timeout how long it may take to exit
     */
    void stop(Duration timeout) {
        NodeProcess.terminate(process, timeout);
    }

    private String log() {
        try {
            return Files.exists(logFile()) ? Files.readString(logFile(), StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(cannot read " + logFile() + ": " + e + ")";
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper " + connectString();
    }
}
