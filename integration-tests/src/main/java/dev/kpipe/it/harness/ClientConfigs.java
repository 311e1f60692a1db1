// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * Client configs for the listeners of a {@link Cluster}'s nodes: PLAINTEXT, SASL_PLAINTEXT with SCRAM, SSL against
 * the cluster's test CA, and SASL_SSL. Each call returns a new mutable map (insertion-ordered) to add producer,
 * consumer or admin settings to. Stateless; any thread.
 */
final class ClientConfigs {
    private ClientConfigs() {}

    /** @return {@code bootstrap.servers} of the nodes' {@value KafkaNode#CLIENT_LISTENER} listeners */
    static Map<String, Object> plaintext(List<KafkaNode> nodes) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap(nodes, KafkaNode::bootstrapAddress));
        return m;
    }

    /**
     * @return bootstrap, security protocol, mechanism and JAAS login of {@code user} for the {@value
     *     KafkaNode#SASL_LISTENER} listeners
     * @throws IllegalStateException if the nodes have no such listener
     */
    static Map<String, Object> sasl(List<KafkaNode> nodes, String user, String password) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap(nodes, KafkaNode::saslBootstrapAddress));
        m.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        m.put("sasl.mechanism", KafkaNode.SASL_MECHANISM);
        m.put(
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user + "\" password=\""
                        + password + "\";");
        return m;
    }

    /**
     * @param certificates the cluster's TLS material, asked for after the listeners
     * @return bootstrap, security protocol and trust store for the {@value KafkaNode#SSL_LISTENER} listeners
     * @throws IllegalStateException if the nodes have no such listener
     */
    static Map<String, Object> ssl(List<KafkaNode> nodes, Supplier<TestCertificates> certificates) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap(nodes, KafkaNode::sslBootstrapAddress));
        m.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        putTrustStore(m, certificates.get());
        return m;
    }

    /**
     * @return {@link #sasl} with the bootstrap and security protocol of the {@value KafkaNode#SASL_SSL_LISTENER}
     *     listeners and the trust store
     * @throws IllegalStateException if the nodes have no SASL or no SASL_SSL listener
     */
    static Map<String, Object> saslSsl(
            List<KafkaNode> nodes, Supplier<TestCertificates> certificates, String user, String password) {
        Map<String, Object> m = sasl(nodes, user, password);
        m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap(nodes, KafkaNode::saslSslBootstrapAddress));
        m.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        putTrustStore(m, certificates.get());
        return m;
    }

    /** @return the nodes' addresses of one listener, comma-separated */
    static String bootstrap(List<KafkaNode> nodes, Function<KafkaNode, String> address) {
        return nodes.stream().map(address).collect(Collectors.joining(","));
    }

    private static void putTrustStore(Map<String, Object> m, TestCertificates tls) {
        m.put("ssl.truststore.location", tls.trustStore().toString());
        m.put("ssl.truststore.type", TestCertificates.STORE_TYPE);
        m.put("ssl.truststore.password", tls.password());
    }
}
