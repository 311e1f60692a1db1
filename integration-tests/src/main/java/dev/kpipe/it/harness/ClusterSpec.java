package dev.kpipe.it.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What cluster to run: node count, whether kpipe is installed and enabled, config overrides, heap, and optionally
 * which Kafka distribution (by version or folder; default: the harness's {@code kpipe.it.kafka.home}).
 *
 * <p>Node 1 is combined ({@code process.roles=broker,controller}, the only controller); nodes 2..n are brokers.
 * Broker config is layered, later layers winning: harness defaults, kpipe settings, {@link
 * Builder#brokerConfig cluster-wide overrides}, {@link Builder#nodeConfig per-node overrides}. Immutable.
 */
public final class ClusterSpec {

    /** The class that installs kpipe, as an operator configures it in {@code metric.reporters}. */
    public static final String KPIPE_PLUGIN_CLASS = "dev.kpipe.plugin.KpipePlugin";

    private final String name;
    private final int nodes;
    private final boolean installPlugin;
    private final boolean kpipeEnabled;
    private final Map<String, String> brokerConfig;
    private final Map<Integer, Map<String, String>> nodeConfig;
    private final String heap;
    private final boolean saslScram;
    private final boolean tls;
    private final String kafkaVersion;
    private final Path kafkaHome;
    private final boolean javaagent;
    private final boolean zookeeper;
    private final List<String> kafkaOpts;
    private final List<Path> extraLibs;

    private ClusterSpec(Builder b) {
        this.name = b.name;
        this.nodes = b.nodes;
        this.installPlugin = b.installPlugin;
        this.kpipeEnabled = b.kpipeEnabled;
        this.brokerConfig = Collections.unmodifiableMap(new LinkedHashMap<>(b.brokerConfig));
        Map<Integer, Map<String, String>> nc = new TreeMap<>();
        b.nodeConfig.forEach((k, v) -> nc.put(k, Collections.unmodifiableMap(new LinkedHashMap<>(v))));
        this.nodeConfig = Collections.unmodifiableMap(nc);
        this.heap = b.heap;
        this.saslScram = b.saslScram;
        this.tls = b.tls;
        this.kafkaVersion = b.kafkaVersion;
        this.kafkaHome = b.kafkaHome;
        this.javaagent = b.javaagent;
        this.zookeeper = b.zookeeper;
        this.kafkaOpts = List.copyOf(b.kafkaOpts);
        this.extraLibs = List.copyOf(b.extraLibs);
    }

    /** @return a builder for a 1-node cluster with kpipe installed and enabled */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a short name used for the cluster's folder */
    public String name() {
        return name;
    }

    /** @return the number of nodes (1 combined node + brokers) */
    public int nodes() {
        return nodes;
    }

    /** @return whether the kpipe jar is copied into libs/ and {@code metric.reporters} names its plugin class */
    public boolean installPlugin() {
        return installPlugin;
    }

    /** @return the value written for {@code kpipe.enable} when the plugin is installed */
    public boolean kpipeEnabled() {
        return kpipeEnabled;
    }

    /** @return the cluster-wide overrides, in insertion order */
    public Map<String, String> brokerConfig() {
        return brokerConfig;
    }

    /** @return the per-node overrides by node id */
    public Map<Integer, Map<String, String>> nodeConfig() {
        return nodeConfig;
    }

    /** @return the broker heap ({@code -Xmx} value), or {@code null} for the harness default */
    public String heap() {
        return heap;
    }

    /**
     * @return whether every node also has a {@value KafkaNode#SASL_LISTENER} client listener with {@value
     *     KafkaNode#SASL_MECHANISM} (see {@link Builder#saslScramListener})
     */
    public boolean saslScram() {
        return saslScram;
    }

    /**
     * @return whether every node also has a {@value KafkaNode#SSL_LISTENER} client listener, and with {@link
     *     #saslScram()} a {@value KafkaNode#SASL_SSL_LISTENER} one, with a test CA generated at lay-out (see {@link
     *     Builder#tlsListeners})
     */
    public boolean tls() {
        return tls;
    }

    /**
     * @return the Kafka version whose laid-out distribution the nodes run ({@link HarnessSettings#kafkaHome(String)}),
     *     or {@code null} for {@link #kafkaHome()} or the harness default
     */
    public String kafkaVersion() {
        return kafkaVersion;
    }

    /**
     * @return whether the cluster runs in ZooKeeper mode (Kafka 3.8/3.9 only; see {@link Builder#zookeeper}); also on
     *     when {@link HarnessSettings#zookeeper()} says so
     */
    public boolean zookeeper() {
        return zookeeper;
    }

    /** @return the distribution folder (holding {@code libs/}) the nodes run, or {@code null} if not set explicitly */
    public Path kafkaHome() {
        return kafkaHome;
    }

    /**
     * @return whether every node's JVM starts with {@code -javaagent:<libs/kpipe jar>} (see {@link Builder#javaagent})
     */
    public boolean javaagent() {
        return javaagent;
    }

    /** In a {@link Builder#kafkaOpts} option, stands for the id of the node whose command line it goes on. */
    public static final String NODE_PLACEHOLDER = "{node}";

    /** @return extra JVM options of every node, as in {@code KAFKA_OPTS} (see {@link Builder#kafkaOpts}); immutable */
    public List<String> kafkaOpts() {
        return kafkaOpts;
    }

    /** @return jars copied into the nodes' {@code libs/} besides the distribution's (and kpipe's), e.g. test plugins */
    public List<Path> extraLibs() {
        return extraLibs;
    }

    @Override
    public String toString() {
        return name + "[nodes=" + nodes + ", plugin=" + installPlugin + ", kpipe.enable=" + kpipeEnabled
                + (kafkaHome != null
                        ? ", kafkaHome=" + kafkaHome
                        : kafkaVersion != null ? ", kafka=" + kafkaVersion : "")
                + (saslScram ? ", saslScram" : "") + (tls ? ", tls" : "") + (javaagent ? ", javaagent" : "")
                + (kafkaOpts.isEmpty() ? "" : ", kafkaOpts=" + kafkaOpts)
                + (extraLibs.isEmpty() ? "" : ", extraLibs=" + extraLibs)
                + ", brokerConfig=" + brokerConfig + ", nodeConfig=" + nodeConfig + "]";
    }

    /** Builds a {@link ClusterSpec}. Not thread-safe. */
    public static final class Builder {
        private String name = "cluster";
        private int nodes = 1;
        private boolean installPlugin = true;
        private boolean kpipeEnabled = true;
        private final Map<String, String> brokerConfig = new LinkedHashMap<>();
        private final Map<Integer, Map<String, String>> nodeConfig = new TreeMap<>();
        private String heap;
        private boolean saslScram;
        private boolean tls;
        private String kafkaVersion;
        private boolean zookeeper;
        private Path kafkaHome;
        private boolean javaagent;
        private final List<String> kafkaOpts = new ArrayList<>();
        private final List<Path> extraLibs = new ArrayList<>();

        private Builder() {}

        /**
         * @param name folder-friendly name; other characters are replaced by {@code _}
         * @return this
         */
        public Builder name(String name) {
            this.name = name.replaceAll("[^A-Za-z0-9._-]", "_");
            return this;
        }

        /**
         * @param nodes number of nodes, at least 1; node 1 is broker+controller, the others brokers
         * @return this
         */
        public Builder nodes(int nodes) {
            if (nodes < 1) {
                throw new IllegalArgumentException("nodes must be >= 1: " + nodes);
            }
            this.nodes = nodes;
            return this;
        }

        /**
         * @param install whether to drop the kpipe jar into libs/ and set {@code metric.reporters} (default true);
         *     false gives a stock broker
         * @return this
         */
        public Builder installPlugin(boolean install) {
            this.installPlugin = install;
            return this;
        }

        /**
         * @param enabled value of {@code kpipe.enable} (default true); only written if the plugin is installed
         * @return this
         */
        public Builder kpipe(boolean enabled) {
            this.kpipeEnabled = enabled;
            return this;
        }

        /**
         * Sets a cluster-wide broker config override.
         *
         * @param key config key
         * @param value config value
         * @return this
         */
        public Builder brokerConfig(String key, String value) {
            brokerConfig.put(key, value);
            return this;
        }

        /**
         * Sets a config override for one node.
         *
         * @param nodeId node id, 1-based
         * @param key config key
         * @param value config value
         * @return this
         */
        public Builder nodeConfig(int nodeId, String key, String value) {
            nodeConfig.computeIfAbsent(nodeId, k -> new LinkedHashMap<>()).put(key, value);
            return this;
        }

        /**
         * Parses {@code key=value} (cluster-wide) or {@code nodeId:key=value} (one node).
         *
         * @param entry the override
         * @return this
         */
        public Builder config(String entry) {
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value or nodeId:key=value, got: " + entry);
            }
            String left = entry.substring(0, eq).trim();
            String value = entry.substring(eq + 1).trim();
            int colon = left.indexOf(':');
            if (colon > 0 && left.substring(0, colon).chars().allMatch(Character::isDigit)) {
                return nodeConfig(
                        Integer.parseInt(left.substring(0, colon)),
                        left.substring(colon + 1).trim(),
                        value);
            }
            return brokerConfig(left, value);
        }

        /**
         * @param heap {@code -Xmx} value for each broker JVM, e.g. {@code 512m} or {@code 1g}; null for the default
         * @return this
         */
        public Builder heap(String heap) {
            this.heap = heap == null || heap.isBlank() ? null : heap.trim();
            return this;
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
        public Builder saslScramListener(boolean enabled) {
            this.saslScram = enabled;
            return this;
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
        public Builder tlsListeners(boolean enabled) {
            this.tls = enabled;
            return this;
        }

        /**
         * Runs the nodes on another laid-out Kafka version than the harness default ({@code kpipe.it.kafka.version}):
         * the distribution {@code kafka-<version>/} under {@link HarnessSettings#kafkaDists()}. Test clients are not
         * affected (they are the build's kafka-clients).
         *
         * @param version e.g. {@code 4.2.1}; null or blank for the default
         * @return this
         */
        public Builder kafkaVersion(String version) {
            this.kafkaVersion = version == null || version.isBlank() ? null : version.trim();
            return this;
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
        public Builder zookeeper(boolean enabled) {
            this.zookeeper = enabled;
            return this;
        }

        /**
         * Runs the nodes on the Kafka distribution in a folder (holding {@code libs/} as in the official tarball); wins
         * over {@link #kafkaVersion}.
         *
         * @param home the distribution folder; null for the default
         * @return this
         */
        public Builder kafkaHome(Path home) {
            this.kafkaHome = home == null ? null : home.toAbsolutePath().normalize();
            return this;
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
        public Builder javaagent(boolean enabled) {
            this.javaagent = enabled;
            return this;
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
        public Builder kafkaOpts(String... options) {
            for (String o : options) {
                if (o != null && !o.isBlank()) {
                    kafkaOpts.add(o.trim());
                }
            }
            return this;
        }

        /**
         * Copies a jar into the nodes' {@code libs/} (on the broker classpath), as an operator installs a plugin: e.g. a
         * test implementation of a kpipe SPI named in a {@code kpipe.*.class} setting.
         *
         * @param jar the jar
         * @return this
         */
        public Builder extraLib(Path jar) {
            this.extraLibs.add(jar.toAbsolutePath().normalize());
            return this;
        }

        /**
         * @return the spec
         * @throws IllegalArgumentException if a node override names a node that does not exist, or {@link #javaagent}
         *     is set without {@link #installPlugin} (the agent jar is the installed plugin jar)
         */
        public ClusterSpec build() {
            if (javaagent && !installPlugin) {
                throw new IllegalArgumentException(
                        "javaagent(true) needs installPlugin(true): the agent is the kpipe jar" + " in libs/");
            }
            for (int id : nodeConfig.keySet()) {
                if (id < 1 || id > nodes) {
                    throw new IllegalArgumentException(
                            "node override for node " + id + " but the cluster has " + nodes);
                }
            }
            return new ClusterSpec(this);
        }
    }
}
