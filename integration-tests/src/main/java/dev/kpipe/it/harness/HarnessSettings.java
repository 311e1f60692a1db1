// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * Where the harness finds its inputs: the laid-out Kafka distribution, the kpipe drop-in jar, the working directory.
 *
 * <p>Each value comes from the system property of the same name if set, else from {@code harness.properties}, which
 * the Maven build fills in (so the CLI works without any {@code -D}). Keys:
 *
 * <ul>
 *   <li>{@code kpipe.it.kafka.home}: the default distribution folder holding {@code libs/} (e.g. {@code
 *       integration-tests/target/kafka-4.4.0}), used by clusters whose {@link ClusterSpec} names no Kafka version;
 *   <li>{@code kpipe.it.kafka.version}: its Kafka version;
 *   <li>{@code kpipe.it.kafka.dists}: the folder holding every laid-out distribution as {@code kafka-<version>/}
 *       (default: the parent of {@code kpipe.it.kafka.home}), for {@link #kafkaHome(String)};
 *   <li>{@code kpipe.it.plugin.jar}, {@code kpipe.it.plugin.version}: the drop-in jar and its version;
 *   <li>{@code kpipe.it.work.dir}: where cluster folders (configs, data, logs) are created;
 *   <li>{@code kpipe.it.heap}: default broker heap ({@code -Xmx}), e.g. {@code 512m};
 *   <li>{@code kpipe.it.java}: the {@code java} executable for broker JVMs (default: the running JVM's, or the JDK of
 *       {@code kpipe.it.broker.java.version});
 *   <li>{@code kpipe.it.broker.java.version}: a Java feature release, e.g. {@code 25}: broker JVMs run on a JDK of it,
 *       found by {@link JavaHomes} ({@code kpipe.it.java.<release>.home} names one); where none is found, every
 *       {@link KafkaCluster} test is skipped, saying why;
 *   <li>{@code kpipe.it.javaagent}: {@code true} installs kpipe in every cluster that has it as a Java agent as well
 *       ({@code -javaagent:<libs/kpipe jar>}, see {@link ClusterSpec.Builder#javaagent}), as the README's install does;
 *   <li>{@code kpipe.it.start.timeout.seconds}: how long a node may take to become ready (default 180; a node of an idle 2-core machine takes 10 to 20 s, of one at a load average of 40 up to 140 s);
 *   <li>{@code kpipe.it.network.event.listener}: {@code true} names kpipe in {@code network.event.listener.class} as
 *       well, on a distribution with kpipe's reference patch ({@link #networkEventListener()});
 *   <li>{@code kpipe.it.jvm.opts}: extra JVM options for every broker JVM, space separated;
 *   <li>{@code kpipe.it.broker.cpus}: a CPU list as {@code taskset -c} takes it (e.g. {@code 1} or {@code 0,2-3}): every
 *       node JVM is started through {@code taskset -c <list>} ({@link #brokerCpus()}); unset: no prefix.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class HarnessSettings {

    private final Properties values;

    private HarnessSettings(Properties values) {
        this.values = values;
    }

    /**
     * Reads the settings: system properties over the build-time defaults.
     *
     * @return the settings in force now
     */
    public static HarnessSettings load() {
        Properties p = new Properties();
        try (InputStream in = HarnessSettings.class.getResourceAsStream("harness.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String key : System.getProperties().stringPropertyNames()) {
            if (key.startsWith("kpipe.it.")) {
                p.setProperty(key, System.getProperty(key));
            }
        }
        return new HarnessSettings(p);
    }

    private String get(String key, String def) {
        String v = values.getProperty(key);
        return v == null || v.isBlank() || v.startsWith("${") ? def : v.trim();
    }

    private String required(String key) {
        String v = get(key, null);
        if (v == null) {
            throw new IllegalStateException(
                    "harness setting " + key + " is not set (system property or harness.properties)");
        }
        return v;
    }

    /**
     * @return the Kafka version of the default distribution, e.g. {@code 4.4.0}: taken from its {@code
     *     libs/kafka_2.13-<v>.jar}, else from {@code kpipe.it.kafka.version}
     */
    public String kafkaVersion() {
        String home = get("kpipe.it.kafka.home", null);
        if (home != null) {
            Optional<String> v = kafkaVersionOf(Path.of(home));
            if (v.isPresent()) {
                return v.get();
            }
        }
        return required("kpipe.it.kafka.version");
    }

    /**
     * @param home a distribution folder
     * @return the Kafka version of its {@code libs/kafka_2.13-<v>.jar}, or empty if it has none (not laid out)
     */
    public static Optional<String> kafkaVersionOf(Path home) {
        try (Stream<Path> jars = Files.list(home.resolve("libs"))) {
            return jars.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("kafka_2.13-") && n.endsWith(".jar"))
                    .map(n -> n.substring("kafka_2.13-".length(), n.length() - ".jar".length()))
                    .findFirst();
        } catch (IOException e) {
            return Optional.empty(); // no distribution (yet)
        }
    }

    /**
     * @return the default distribution folder holding {@code libs/}
     * @throws IllegalStateException if it has no {@code libs/} folder (the build did not lay it out)
     */
    public Path kafkaHome() {
        return checkedHome(Path.of(required("kpipe.it.kafka.home")));
    }

    /**
     * @return the folder holding every laid-out distribution as {@code kafka-<version>/}: {@code kpipe.it.kafka.dists},
     *     else the parent of {@code kpipe.it.kafka.home}
     */
    public Path kafkaDists() {
        String dists = get("kpipe.it.kafka.dists", null);
        return (dists != null
                        ? Path.of(dists)
                        : Path.of(required("kpipe.it.kafka.home"))
                                .toAbsolutePath()
                                .getParent())
                .toAbsolutePath()
                .normalize();
    }

    /**
     * The distribution of one Kafka version: {@code kafka-<version>/} under {@link #kafkaDists()}. The build lays out
     * the project's Kafka version and those of the {@code kafka-dists} modules (3.7.2, 3.8.1, 3.9.1, 4.0.2, 4.1.2, 4.2.1,
     * 4.3.1); {@code
     * -Dkpipe.it.kafka.version=X} lays out X as well.
     *
     * @param version a Kafka version, e.g. {@code 4.2.1}
     * @return its distribution folder holding {@code libs/}
     * @throws IllegalStateException if that version is not laid out
     */
    public Path kafkaHome(String version) {
        return checkedHome(kafkaDists().resolve("kafka-" + version));
    }

    private static Path checkedHome(Path dir) {
        Path home = dir.toAbsolutePath().normalize();
        if (!Files.isDirectory(home.resolve("libs"))) {
            throw new IllegalStateException("no Kafka distribution at " + home + " (libs/ missing): build it with "
                    + "mvn -B -pl integration-tests -am package -DskipTests (versions other than those of kafka-dists: "
                    + "add -Dkpipe.it.kafka.version=<version>)");
        }
        return home;
    }

    /** @return the path of the kpipe drop-in jar; it may not exist (checked when a cluster installs it) */
    public Path pluginJar() {
        return Path.of(required("kpipe.it.plugin.jar")).toAbsolutePath().normalize();
    }

    /** @return the project version of the kpipe jar, as it appears in its start-up log line */
    public String pluginVersion() {
        return required("kpipe.it.plugin.version");
    }

    /** @return the folder under which each cluster gets its own folder */
    public Path workDir() {
        return Path.of(get("kpipe.it.work.dir", "target/it-clusters"))
                .toAbsolutePath()
                .normalize();
    }

    /** @return the default broker heap size as given to {@code -Xmx}, e.g. {@code 512m} */
    public String heap() {
        return get("kpipe.it.heap", "512m");
    }

    /**
     * @return the {@code java} executable used for broker and tool JVMs: {@code kpipe.it.java}, else that of the JDK of
     *     {@code kpipe.it.broker.java.version}, else the running JVM's
     * @throws IllegalStateException if {@code kpipe.it.broker.java.version} names a release no JDK is found for
     */
    public Path javaExecutable() {
        String explicit = get("kpipe.it.java", null);
        if (explicit != null) {
            return Path.of(explicit);
        }
        Optional<JavaHomes.Lookup> broker = brokerJava();
        if (broker.isPresent()) {
            return broker.get()
                    .java()
                    .orElseThrow(() -> new IllegalStateException(broker.get().notFound()));
        }
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /**
     * @return the lookup of the JDK that {@code kpipe.it.broker.java.version} asks broker JVMs to run on, or empty when
     *     it is not set (or {@code kpipe.it.java} names the executable)
     * @throws IllegalArgumentException if the setting is not a number
     */
    public Optional<JavaHomes.Lookup> brokerJava() {
        String release = get("kpipe.it.broker.java.version", null);
        if (release == null || get("kpipe.it.java", null) != null) {
            return Optional.empty();
        }
        int feature;
        try {
            feature = Integer.parseInt(release);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "kpipe.it.broker.java.version must be a Java feature release such as 25, got " + release);
        }
        return Optional.of(JavaHomes.find(feature, get("kpipe.it.java." + feature + ".home", null), System.getenv()));
    }

    /**
     * @return whether every cluster that installs kpipe also loads it with {@code -javaagent} ({@code
     *     kpipe.it.javaagent}, default false)
     */
    public boolean javaagent() {
        return Boolean.parseBoolean(get("kpipe.it.javaagent", "false"));
    }

    /**
     * @return whether every cluster that installs kpipe also names it in the broker setting {@code
     *     network.event.listener.class} ({@code kpipe.it.network.event.listener}, default false): for a distribution
     *     with kpipe's reference patch (kafka-dists/kafka-4.3.1-patched), whose broker calls the SPI itself
     */
    public boolean networkEventListener() {
        return Boolean.parseBoolean(get("kpipe.it.network.event.listener", "false"));
    }

    /** @return how long a node may take from process start until it is ready */
    public Duration startTimeout() {
        return Duration.ofSeconds(Long.parseLong(get("kpipe.it.start.timeout.seconds", "180")));
    }

    /**
     * @return whether every cluster runs in ZooKeeper mode ({@code kpipe.it.zookeeper}, default false; see {@link
     *     ClusterSpec.Builder#zookeeper}), for running a whole suite that way
     */
    public boolean zookeeper() {
        return Boolean.parseBoolean(get("kpipe.it.zookeeper", "false"));
    }

    /** @return extra JVM options for broker JVMs (may be empty) */
    public String[] extraJvmOptions() {
        String v = get("kpipe.it.jvm.opts", "");
        return v.isEmpty() ? new String[0] : v.split("\\s+");
    }

    /**
     * @return the CPU list every node JVM is pinned to ({@code kpipe.it.broker.cpus}, as {@code taskset -c} takes it),
     *     or empty: no pinning, the command line as without this setting
     */
    public Optional<String> brokerCpus() {
        return Optional.ofNullable(get("kpipe.it.broker.cpus", null));
    }
}
