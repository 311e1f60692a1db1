// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JMX connection to one {@link KafkaNode}'s JVM (RMI on 127.0.0.1, no authentication, no TLS): opened on first
 * use, kept until {@link #close()} (the node closes it when it stops or kills its JVM).
 *
 * <p>Thread-safe (synchronized); {@link #connect()} blocks for as long as the RMI connection takes.
 */
final class NodeJmx {
    private static final Logger LOG = LoggerFactory.getLogger(NodeJmx.class);

    private final int id;
    private final int port;
    private JMXConnector connector;

    NodeJmx(int id, int port) {
        this.id = id;
        this.port = port;
    }

    /** @return the JMX service URL of the node's JVM */
    String serviceUrl() {
        return "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi";
    }

    /**
     * @return a connection to the node JVM's platform MBean server, connecting first if there is none
     * @throws UncheckedIOException if the connection fails
     */
    synchronized MBeanServerConnection connect() {
        try {
            if (connector == null) {
                connector = JMXConnectorFactory.connect(new JMXServiceURL(serviceUrl()), Map.of());
            }
            return connector.getMBeanServerConnection();
        } catch (IOException e) {
            throw new UncheckedIOException("JMX connection to node " + id + " at " + serviceUrl() + " failed", e);
        }
    }

    /** Closes the connection if there is one (errors are logged at debug level); the next use connects again. */
    synchronized void close() {
        if (connector != null) {
            try {
                connector.close();
            } catch (IOException e) {
                LOG.debug("closing JMX connection to node {}: {}", id, e.toString());
            }
            connector = null;
        }
    }
}
