// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static dev.kpipe.it.harness.NodeLogs.log4jConfig;
import static dev.kpipe.it.harness.NodeLogs.read;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link KafkaNode}'s files before its JVM starts: writes its {@code server.properties} and {@code log4j2.xml}, and
 * formats its KRaft storage with {@code kafka.tools.StorageTool format} (what {@code kafka-storage.sh format} runs),
 * in this JVM ({@link StorageFormatter}) or in a child JVM.
 *
 * <p>Called by the controlling thread (the node's or the cluster's lifecycle methods); a format in a child JVM takes
 * at most 2 minutes.
 */
final class NodeStorage {
    private final Cluster cluster;
    private final KafkaNode node;

    NodeStorage(Cluster cluster, KafkaNode node) {
        this.cluster = cluster;
        this.node = node;
    }

    /** @return the node's id, for messages */
    int id() {
        return node.id();
    }

    /** @return the node's folder, where the tool's {@code format.log} goes */
    Path dir() {
        return node.dir();
    }

    /**
     * Writes the node's {@code server.properties} (backslashes escaped) and {@code log4j2.xml}.
     *
     * @param config the broker config, in the order to write it
     * @throws UncheckedIOException if a file cannot be written
     */
    void writeConfig(Map<String, String> config) {
        try {
            Files.createDirectories(node.dir());
            try (Writer w = Files.newBufferedWriter(node.configFile(), StandardCharsets.UTF_8)) {
                w.write("# node " + node.id() + " of cluster " + cluster.spec().name()
                        + ", written by the kpipe harness\n");
                for (Map.Entry<String, String> e : config.entrySet()) {
                    w.write(e.getKey() + "=" + e.getValue().replace("\\", "\\\\") + "\n");
                }
            }
            Files.writeString(node.dir().resolve("log4j2.xml"), log4jConfig(node.id(), node.logFile()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return whether the data folder holds {@code meta.properties} */
    boolean isFormatted() {
        return Files.exists(node.dataDir().resolve("meta.properties"));
    }

    /**
     * Formats this node's storage: in this JVM if it has the same Kafka version on its classpath (saves a JVM start),
     * else in a child JVM.
     *
     * @throws IllegalStateException if the tool fails or times out
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
                node.configFile().toString());
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
                    .directory(node.dir().toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(node.dir().resolve("format.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Waits up to 2 minutes for a {@link #launchFormat() launched} format to end.
     *
     * @param format the tool's JVM
     * @throws IllegalStateException if it fails (with its output) or times out (it is killed)
     */
    void awaitFormat(Process format) {
        try {
            if (!format.waitFor(2, TimeUnit.MINUTES)) {
                format.destroyForcibly();
                throw new IllegalStateException("formatting node " + node.id() + " timed out");
            }
        } catch (InterruptedException e) {
            format.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (format.exitValue() != 0 || !isFormatted()) {
            throw new IllegalStateException("formatting node " + node.id() + " failed (exit " + format.exitValue()
                    + "):\n" + read(node.dir().resolve("format.log"), 0));
        }
    }
}
