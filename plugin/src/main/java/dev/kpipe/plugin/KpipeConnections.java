package dev.kpipe.plugin;

import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import java.lang.management.ManagementFactory;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection dump in JMX: MBean {@value #MBEAN}, one read-only {@code String} attribute {@value #ATTRIBUTE} that
 * lists every connection kpipe owns ({@link ConnectionDump} gives the format). Computed only when the attribute is
 * read; nothing is kept or updated otherwise.
 *
 * <p>A small dynamic MBean of its own rather than a gauge in kpipe's Kafka {@code Metrics} registry: Kafka's
 * {@code JmxReporter} declares every attribute as a {@code double}, and a metric reporter (or a Prometheus JMX
 * exporter pointed at {@code kafka.server:type=kpipe-metrics}) would meet a multi-line string among numbers; a
 * dynamic MBean declares the attribute {@code java.lang.String} and can carry the hyphenated name, which a standard
 * MBean's getter cannot.
 *
 * <p>Thread: the attribute is read on a JMX (RMI) thread; see {@link PipelineCoordinator#connectionSnapshots()} for
 * what that reads. A throwable while building the dump is logged at DEBUG and returned as a one-line dump saying so;
 * it never reaches the caller as anything but the attribute's text.
 */
final class KpipeConnections implements DynamicMBean {
    /** The MBean's name, beside {@code kafka.server:type=kpipe-metrics}. */
    static final String MBEAN = "kafka.server:type=kpipe-connections";
    /** The attribute with the dump. */
    static final String ATTRIBUTE = "connection-dump";

    private static final Logger LOG = LoggerFactory.getLogger(KpipeConnections.class);

    private final PipelineCoordinator coordinator;
    private final int limit;

    /**
     * @param coordinator the connections to list
     * @param limit how many to list at most ({@link ConnectionDump#MAX_CONNECTIONS} in a broker)
     */
    KpipeConnections(PipelineCoordinator coordinator, int limit) {
        this.coordinator = coordinator;
        this.limit = limit;
    }

    /** @return the dump now; thread: any; never throws */
    String dump() {
        try {
            return ConnectionDump.format(coordinator.connectionSnapshots(), limit);
        } catch (Throwable e) {
            LOG.debug("kpipe: failed to build the connection dump", e);
            return "kpipe connections: dump failed: " + e + "\n";
        }
    }

    /**
     * Registers this MBean in the platform MBean server, replacing one registered earlier in this JVM (as Kafka's
     * {@code JmxReporter} does for its beans). Thread: the runtime's, under its lock. Logs and returns false if JMX
     * refuses.
     *
     * @return whether it is registered
     */
    boolean register() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            ObjectName name = new ObjectName(MBEAN);
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(this, name);
            return true;
        } catch (JMException | RuntimeException e) {
            LOG.warn("kpipe: cannot register {} (the connection dump)", MBEAN, e);
            return false;
        }
    }

    /**
     * Unregisters the MBean of that name (this one, unless a later runtime of this JVM replaced it). Thread: the
     * runtime's.
     */
    void unregister() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.unregisterMBean(new ObjectName(MBEAN));
        } catch (InstanceNotFoundException e) {
            // already gone
        } catch (JMException | RuntimeException e) {
            LOG.debug("kpipe: cannot unregister {}", MBEAN, e);
        }
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
        if (!ATTRIBUTE.equals(attribute)) {
            throw new AttributeNotFoundException(attribute);
        }
        return dump();
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException(attribute.getName() + " (read-only)");
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        AttributeList list = new AttributeList();
        for (String a : attributes) {
            if (ATTRIBUTE.equals(a)) {
                list.add(new Attribute(a, dump()));
            }
        }
        return list;
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) {
        throw new UnsupportedOperationException(actionName);
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return new MBeanInfo(KpipeConnections.class.getName(),
            "kpipe's pipelined connections, listed on read (docs/monitoring.md)",
            new MBeanAttributeInfo[] {new MBeanAttributeInfo(ATTRIBUTE, String.class.getName(),
                "Every connection kpipe owns (at most " + limit + ", oldest request in flight first): id, listener,"
                    + " principal, client id and software, state, requests and bytes in flight, held responses, age of"
                    + " the oldest request in flight, why it is not reading.", true, false, false)},
            null, null, null);
    }
}
