// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import dev.kpipe.it.watchdog.ParentWatchdog;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files a {@link Cluster} lays out before its nodes start and deletes when it closes: which Kafka distribution it
 * runs, its {@code libs/} folder (symlinks to the distribution's jars, copies of the kpipe jar and extra jars), the
 * {@link ParentWatchdog} class its node JVMs start through and the log4j2 config for command-line tools. Called by the cluster's controlling thread; file I/O only.
 */
final class ClusterLayout {
    private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);

    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private ClusterLayout() {}

    /** @return a new cluster's folder: {@code <work dir>/<name>-<yyyyMMdd-HHmmss>-<pid>-<sequence number>} */
    static Path newDir(ClusterSpec spec, HarnessSettings settings) {
        return settings.workDir()
                .resolve(spec.name() + "-" + LocalDateTime.now().format(TS) + "-"
                        + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet());
    }

    /**
     * @return the distribution folder: {@link ClusterSpec#kafkaHome()}, else the laid-out {@link
     *     ClusterSpec#kafkaVersion()}, else {@link HarnessSettings#kafkaHome()}
     * @throws IllegalStateException if it is not laid out
     */
    static Path kafkaHome(ClusterSpec spec, HarnessSettings settings) {
        if (spec.kafkaHome() != null) {
            Path home = spec.kafkaHome();
            if (!Files.isDirectory(home.resolve("libs"))) {
                throw new IllegalStateException("no Kafka distribution at " + home + " (libs/ missing)");
            }
            return home;
        }
        return spec.kafkaVersion() != null ? settings.kafkaHome(spec.kafkaVersion()) : settings.kafkaHome();
    }

    /** @return the Kafka version of the {@link #kafkaHome distribution}, e.g. {@code 4.4.0} */
    static String kafkaVersion(ClusterSpec spec, HarnessSettings settings) {
        if (spec.kafkaHome() == null && spec.kafkaVersion() == null) {
            return settings.kafkaVersion();
        }
        return HarnessSettings.kafkaVersionOf(kafkaHome(spec, settings)).orElse(spec.kafkaVersion());
    }

    /**
     * Fills {@link Cluster#libsDir()} and writes {@link Cluster#toolsLog4jConfig()}.
     *
     * @throws IllegalStateException if the kpipe jar (when the spec installs it) or an extra lib is missing
     * @throws UncheckedIOException if a file cannot be written
     */
    static void layOutLibs(Cluster c) {
        ClusterSpec spec = c.spec();
        Path home = c.kafkaHome();
        Path libs = c.libsDir();
        try {
            Files.createDirectories(libs);
            try (Stream<Path> jars = Files.list(home.resolve("libs"))) {
                for (Path jar : (Iterable<Path>) jars::iterator) {
                    Files.createSymbolicLink(libs.resolve(jar.getFileName()), jar.toAbsolutePath());
                }
            }
            if (spec.installPlugin()) {
                Path plugin = c.settings().pluginJar();
                if (!Files.isRegularFile(plugin)) {
                    throw new IllegalStateException("kpipe jar not found at " + plugin
                            + ": build it first (mvn -B package -DskipTests from the project root)");
                }
                Files.copy(plugin, c.pluginJarInLibs(), StandardCopyOption.COPY_ATTRIBUTES);
            }
            layOutWatchdog(c.watchdogDir());
            for (Path jar : spec.extraLibs()) {
                if (!Files.isRegularFile(jar)) {
                    throw new IllegalStateException("extra lib not found: " + jar);
                }
                Files.copy(jar, libs.resolve(jar.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
            Files.writeString(c.toolsLog4jConfig(), """
          <?xml version="1.0" encoding="UTF-8"?>
          <!-- For command-line tools run against this cluster: warnings to stderr. -->
          <Configuration status="WARN">
            <Appenders><Console name="stderr" target="SYSTEM_ERR"><PatternLayout pattern="%p %m (%c)%n"/></Console></Appenders>
            <Loggers><Root level="WARN"><AppenderRef ref="stderr"/></Root></Loggers>
          </Configuration>
          """);
        } catch (IOException e) {
            throw new UncheckedIOException("laying out cluster folder " + c.dir(), e);
        }
    }

    /**
     * Copies {@link ParentWatchdog}'s class file (alone: it needs only the JDK) into a class folder for the node JVMs
     * ({@link BrokerCommand}), from wherever the harness's classes are (its jar or {@code target/classes}).
     */
    private static void layOutWatchdog(Path dir) throws IOException {
        String file = ParentWatchdog.class.getSimpleName() + ".class";
        Path target = dir.resolve(ParentWatchdog.class.getPackageName().replace('.', '/'))
                .resolve(file);
        Files.createDirectories(target.getParent());
        try (InputStream in = ParentWatchdog.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("class file of " + ParentWatchdog.class.getName() + " not found");
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Deletes what {@link Cluster#close()} does not keep: {@code libs/}, the watchdog's class, every node's {@code data/}, ZooKeeper's data
     * and the TLS material; configs and logs stay.
     *
     * @param c the cluster
     * @param zooKeeper whether it ran a ZooKeeper server
     * @param certificates its TLS material, or {@code null}
     */
    static void deleteData(Cluster c, boolean zooKeeper, TestCertificates certificates) {
        deleteTree(c.libsDir());
        deleteTree(c.watchdogDir());
        c.nodes().forEach(n -> deleteTree(n.dataDir()));
        if (zooKeeper) {
            deleteTree(c.dir().resolve("zookeeper").resolve("data"));
        }
        if (certificates != null) {
            deleteTree(certificates.dir());
        }
    }

    /** Deletes a folder and everything in it, if it exists; failures are logged, not thrown. */
    static void deleteTree(Path root) {
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
}
