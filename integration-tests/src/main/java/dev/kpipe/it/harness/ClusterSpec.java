// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.nio.file.Path;
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

    /** The class a broker with kpipe's reference patch creates from {@code network.event.listener.class}. */
    public static final String KPIPE_NETWORK_LISTENER_CLASS = "dev.kpipe.plugin.KpipeNetworkListener";

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

    /**
     * Builds a {@link ClusterSpec}: here what the cluster is (name, node count, kpipe installed and enabled, config
     * overrides); how its nodes run (heap, listeners, distribution, JVM options) in the setters it inherits from
     * {@link ClusterSpecOptions}. Not thread-safe.
     */
    public static final class Builder extends ClusterSpecOptions<Builder> {
        private String name = "cluster";
        private int nodes = 1;
        private boolean installPlugin = true;
        private boolean kpipeEnabled = true;
        private final Map<String, String> brokerConfig = new LinkedHashMap<>();
        private final Map<Integer, Map<String, String>> nodeConfig = new TreeMap<>();

        private Builder() {}

        @Override
        Builder self() {
            return this;
        }

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
