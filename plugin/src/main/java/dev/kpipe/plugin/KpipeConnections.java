// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.plugin.pipeline.ConnectionSnapshot;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanRegistration;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.ReflectionException;
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
 * what that reads. A throwable while building the dump is logged (at WARN the first time for this MBean, at DEBUG after
 * that, so that a dump polled by a monitoring tool cannot flood the broker log) and returned as a one-line dump saying
 * so; it never reaches the caller as anything but the attribute's text, but for a {@link VirtualMachineError} (out of
 * memory, a stack overflow), which is thrown on. (Not {@code pipeline.FaultLog}: that one is
 * for faults on broker threads and points at {@code plugin-fault-total}, which a failed dump does not count in.)
 *
 * <p>It has no operations: {@link #invoke} throws {@link ReflectionException}, as JMX expects for an unknown
 * operation.
 */
final class KpipeConnections implements DynamicMBean, MBeanRegistration {
    /** The MBean's name, beside {@code kafka.server:type=kpipe-metrics}. */
    static final String MBEAN = "kafka.server:type=kpipe-connections";
    /** The attribute with the dump. */
    static final String ATTRIBUTE = "connection-dump";

    private final Supplier<List<ConnectionSnapshot>> snapshots;
    private final int limit;
    private final Logger log;
    /** This instance's name: {@link #MBEAN}, with its broker's tags ({@link JmxNames}). */
    private final String mbean;
    /** Whether the MBean server holds this instance under {@link #MBEAN}: set and cleared by its callbacks. */
    private volatile boolean registered;

    private final AtomicBoolean warned = new AtomicBoolean();

    /**
     * @param coordinator the connections to list
     * @param limit how many to list at most ({@link ConnectionDump#MAX_CONNECTIONS} in a broker)
     */
    KpipeConnections(PipelineCoordinator<?, ?> coordinator, int limit) {
        this(coordinator, limit, Map.of());
    }

    /**
     * @param coordinator the connections to list
     * @param limit how many to list at most
     * @param tags the broker's tags in the name ({@link JmxNames}): none, or {@code node-id}
     */
    KpipeConnections(PipelineCoordinator<?, ?> coordinator, int limit, Map<String, String> tags) {
        this(coordinator::connectionSnapshots, limit, LoggerFactory.getLogger(KpipeConnections.class), tags);
    }

    /**
     * @param snapshots the connections to list, read on each dump
     * @param limit how many to list at most
     * @param log where a failed dump is logged
     */
    KpipeConnections(Supplier<List<ConnectionSnapshot>> snapshots, int limit, Logger log) {
        this(snapshots, limit, log, Map.of());
    }

    private KpipeConnections(
            Supplier<List<ConnectionSnapshot>> snapshots, int limit, Logger log, Map<String, String> tags) {
        this.snapshots = snapshots;
        this.limit = limit;
        this.log = log;
        this.mbean = JmxNames.name(MBEAN, tags);
    }

    /** @return this instance's MBean name: {@value #MBEAN}, with its broker's tags if any */
    String mbeanName() {
        return mbean;
    }

    /** @return the dump now; thread: any; never throws */
    String dump() {
        try {
            return ConnectionDump.format(snapshots.get(), limit);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            if (warned.compareAndSet(false, true)) {
                log.warn("kpipe: failed to build the connection dump (further failures are logged at DEBUG)", e);
            } else {
                log.debug("kpipe: failed to build the connection dump", e);
            }
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
            ObjectName name = new ObjectName(mbean);
            synchronized (JmxNames.LOCK) {
                if (server.isRegistered(name)) {
                    server.unregisterMBean(name);
                }
                server.registerMBean(this, name);
            }
            return true;
        } catch (JMException | RuntimeException e) {
            log.warn("kpipe: cannot register {} (the connection dump)", mbean, e);
            return false;
        }
    }

    /**
     * Unregisters this MBean if the server still holds it under {@value #MBEAN}; if a later runtime of this JVM
     * replaced it (its {@link #register}), the name is left to that one. Thread: the runtime's.
     */
    void unregister() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            synchronized (JmxNames.LOCK) {
                if (registered) {
                    server.unregisterMBean(new ObjectName(mbean));
                }
            }
        } catch (InstanceNotFoundException e) {
            // already gone
        } catch (JMException | RuntimeException e) {
            log.debug("kpipe: cannot unregister {}", mbean, e);
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

    /** @throws ReflectionException always: this MBean has no operations */
    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) throws ReflectionException {
        throw new ReflectionException(
                new NoSuchMethodException(actionName), mbean + " has no operations: " + actionName);
    }

    @Override
    public ObjectName preRegister(MBeanServer server, ObjectName name) {
        return name;
    }

    @Override
    public void postRegister(Boolean registrationDone) {
        registered = Boolean.TRUE.equals(registrationDone);
    }

    @Override
    public void preDeregister() {}

    @Override
    public void postDeregister() {
        registered = false;
    }

    /** @return whether the MBean server holds this instance (under {@value #MBEAN}); thread: any */
    boolean isRegistered() {
        return registered;
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return new MBeanInfo(
                KpipeConnections.class.getName(),
                "kpipe's pipelined connections, listed on read (docs/monitoring.md)",
                new MBeanAttributeInfo[] {
                    new MBeanAttributeInfo(
                            ATTRIBUTE,
                            String.class.getName(),
                            "Every connection kpipe owns (at most " + limit
                                    + ", oldest request in flight first): id, listener,"
                                    + " principal, client id and software, state, requests and bytes in flight, held responses, age of"
                                    + " the oldest request in flight, why it is not reading.",
                            true,
                            false,
                            false)
                },
                null,
                null,
                null);
    }
}
