// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The {@code server.properties} layout of a {@link Cluster}'s node: listeners, KRaft or ZooKeeper, SASL/TLS, sizes. */
final class BrokerConfig {
    private BrokerConfig() {}

    /**
     * The broker config of one node: harness defaults, kpipe, cluster-wide overrides, node overrides.
     *
     * @param networkEventListener whether kpipe is named in {@code network.event.listener.class} as well
     */
    static Map<String, String> of(
            ClusterSpec spec,
            List<KafkaNode> nodes,
            ZooKeeperServer zooKeeper,
            TestCertificates certificates,
            KafkaNode n,
            boolean networkEventListener) {
        KafkaNode ctl = nodes.get(0);
        Map<String, String> c = new LinkedHashMap<>();
        boolean kraft = zooKeeper == null;
        if (kraft) {
            c.put("process.roles", n.isController() ? "broker,controller" : "broker");
            c.put("node.id", Integer.toString(n.id()));
            c.put("controller.quorum.voters", ctl.id() + "@127.0.0.1:" + ctl.controllerPort());
        } else { // ZooKeeper mode (3.8/3.9): every node a broker, the controller elected through ZooKeeper
            c.put("broker.id", Integer.toString(n.id()));
            c.put("zookeeper.connect", zooKeeper.connectString());
            c.put("zookeeper.connection.timeout.ms", "30000");
        }
        StringBuilder extra = new StringBuilder();
        StringBuilder protocols = new StringBuilder();
        if (spec.saslScram()) {
            extra.append(',')
                    .append(KafkaNode.SASL_LISTENER)
                    .append("://127.0.0.1:")
                    .append(n.saslPort());
            protocols.append(',').append(KafkaNode.SASL_LISTENER).append(":SASL_PLAINTEXT");
        }
        if (spec.tls()) {
            extra.append(',')
                    .append(KafkaNode.SSL_LISTENER)
                    .append("://127.0.0.1:")
                    .append(n.sslPort());
            protocols.append(',').append(KafkaNode.SSL_LISTENER).append(":SSL");
            if (spec.saslScram()) {
                extra.append(',')
                        .append(KafkaNode.SASL_SSL_LISTENER)
                        .append("://127.0.0.1:")
                        .append(n.saslSslPort());
                protocols.append(',').append(KafkaNode.SASL_SSL_LISTENER).append(":SASL_SSL");
            }
        }
        c.put(
                "listeners",
                KafkaNode.CLIENT_LISTENER + "://127.0.0.1:" + n.port() + extra
                        + (kraft && n.isController()
                                ? "," + KafkaNode.CONTROLLER_LISTENER + "://127.0.0.1:" + n.controllerPort()
                                : ""));
        c.put("advertised.listeners", KafkaNode.CLIENT_LISTENER + "://127.0.0.1:" + n.port() + extra);
        if (kraft) {
            c.put("controller.listener.names", KafkaNode.CONTROLLER_LISTENER);
        }
        c.put("inter.broker.listener.name", KafkaNode.CLIENT_LISTENER);
        c.put(
                "listener.security.protocol.map",
                KafkaNode.CLIENT_LISTENER + ":PLAINTEXT"
                        + (kraft ? "," + KafkaNode.CONTROLLER_LISTENER + ":PLAINTEXT" : "") + protocols);
        if (spec.saslScram()) {
            c.put("sasl.enabled.mechanisms", KafkaNode.SASL_MECHANISM);
            List<String> saslListeners = spec.tls()
                    ? List.of(KafkaNode.SASL_LISTENER, KafkaNode.SASL_SSL_LISTENER)
                    : List.of(KafkaNode.SASL_LISTENER);
            for (String listener : saslListeners) {
                c.put(
                        "listener.name." + listener.toLowerCase(Locale.ROOT) + "."
                                + KafkaNode.SASL_MECHANISM.toLowerCase(Locale.ROOT) + ".sasl.jaas.config",
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;");
            }
        }
        if (spec.tls()) {
            c.put("ssl.keystore.location", certificates.keyStore().toString());
            c.put("ssl.keystore.type", TestCertificates.STORE_TYPE);
            c.put("ssl.keystore.password", certificates.password());
            c.put("ssl.key.password", certificates.password());
            c.put("ssl.client.auth", "none");
        }
        c.put("log.dirs", n.dataDir().toString());
        // Small and quick on a 2-core machine.
        c.put("num.network.threads", "2");
        c.put("num.io.threads", "4");
        c.put("num.recovery.threads.per.data.dir", "1");
        c.put("log.cleaner.dedupe.buffer.size", Integer.toString(16 * 1024 * 1024));
        c.put("offsets.topic.replication.factor", "1");
        c.put("offsets.topic.num.partitions", "5");
        c.put("transaction.state.log.replication.factor", "1");
        c.put("transaction.state.log.min.isr", "1");
        c.put("transaction.state.log.num.partitions", "5");
        c.put("share.coordinator.state.topic.replication.factor", "1");
        c.put("share.coordinator.state.topic.min.isr", "1");
        c.put("group.initial.rebalance.delay.ms", "0");
        if (spec.installPlugin()) {
            c.put("metric.reporters", ClusterSpec.KPIPE_PLUGIN_CLASS);
            c.put("kpipe.enable", Boolean.toString(spec.kpipeEnabled()));
            if (networkEventListener) { // a broker with kpipe's reference patch: it calls the SPI, no advice
                c.put("network.event.listener.class", ClusterSpec.KPIPE_NETWORK_LISTENER_CLASS);
            }
        }
        c.putAll(spec.brokerConfig());
        c.putAll(spec.nodeConfig().getOrDefault(n.id(), Map.of()));
        return c;
    }
}
