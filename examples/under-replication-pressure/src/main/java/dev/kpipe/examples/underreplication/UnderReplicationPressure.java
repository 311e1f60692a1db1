// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.underreplication;

import dev.kpipe.extension.StoragePressure;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A per-topic {@link StoragePressure} that follows under-replication: a topic is saturated while this broker leads a
 * partition of it that is under-replicated (fewer in-sync replicas than replicas), so kpipe stops reading the next
 * request of every pipelined connection whose last produce named that topic, and lets them read again, at once, when
 * the topic recovers. A producer to another topic is not held.
 *
 * <p>Source: the broker's own per-partition gauge {@code kafka.cluster:type=Partition,name=UnderReplicated,topic=T,
 * partition=P} (1 while the partition is under-replicated and this broker leads it, else 0; Kafka's documented
 * monitoring metric, {@code Partition.isUnderReplicated}), read from the broker JVM's platform MBean server every
 * {@value #POLL_MS} ms on the source's own daemon thread. No client, no credentials, nothing on the network threads but
 * a volatile read and a set look-up.
 *
 * <p>Settings, in {@code server.properties} beside {@code kpipe.storage.pressure.class} (given by the broker through
 * {@link Configurable}):
 *
 * <ul>
 *   <li>{@value #POLL_MS}: the poll period, ms, 1 to 60,000; default {@value #DEFAULT_POLL_MS}. A topic is held at
 *       most one period after it became under-replicated, and released at most one period after it recovered.
 *   <li>{@value #TOPICS}: the topics followed, a Java regular expression matched against the whole name; default
 *       {@code .*}.
 * </ul>
 *
 * <p>Threads: {@link #saturated(String)} and {@link #anyTopicSaturated()} on the broker's network threads (a volatile
 * read of an immutable set); {@link #onCleared} on the thread that installs kpipe; the poll on the daemon thread
 * {@value #THREAD}, which runs the wake-up listener after publishing the new state, so a woken connection reads the
 * cleared state. kpipe calls {@link #onCleared} when it takes the source into use and again, with a listener of the
 * same effect, when the broker's queue gauges become available: the last listener is kept and the poll thread is
 * started once.
 *
 * <p>Faults: a poll that fails (a gauge that cannot be read) keeps the previous state, is counted ({@code Faults}) and
 * logged at WARN; the next poll tries again. A listener that throws is counted too. Nothing here throws into kpipe.
 *
 * <p>Observability: the MBean {@value #MBEAN} ({@link UnderReplicationPressureMBean}): the saturated topics, the polls,
 * the clears and the time of the last one (epoch ms), the faults; and one INFO line per topic that becomes saturated or
 * recovers.
 */
public final class UnderReplicationPressure
        implements StoragePressure, Configurable, AutoCloseable, UnderReplicationPressureMBean {

    /** The poll period setting, ms. */
    public static final String POLL_MS = "under.replication.pressure.poll.ms";
    /** The default poll period, ms. */
    public static final long DEFAULT_POLL_MS = 200;
    /** The followed topics setting, a regular expression. */
    public static final String TOPICS = "under.replication.pressure.topics";
    /** Where the source's state is in JMX. */
    public static final String MBEAN = "dev.kpipe.examples:type=UnderReplicationPressure";
    /** The poll thread's name. */
    public static final String THREAD = "under-replication-pressure";

    private static final Logger LOG = LoggerFactory.getLogger(UnderReplicationPressure.class);
    private static final ObjectName GAUGES = name("kafka.cluster:type=Partition,name=UnderReplicated,*");

    private final MBeanServer server;
    private final LongSupplier epochMillis;
    private final boolean pollThread;

    private volatile long pollMs = DEFAULT_POLL_MS;
    private volatile Pattern topics = Pattern.compile(".*");
    /** The saturated topics: immutable, replaced whole by the poll thread. */
    private volatile Set<String> saturated = Set.of();

    private volatile Runnable listener = () -> {};
    /** Guarded by this. */
    private ScheduledExecutorService poller;
    /** Guarded by this: the MBean is registered and the poll thread started (once). */
    private boolean registered;

    private final AtomicLong polls = new AtomicLong();
    private final AtomicLong clears = new AtomicLong();
    private final AtomicLong faults = new AtomicLong();
    private volatile long lastClearedEpochMs = -1;

    /** The broker's instance: the platform MBean server, the system clock. Kafka calls it by reflection. */
    public UnderReplicationPressure() {
        this(ManagementFactory.getPlatformMBeanServer(), System::currentTimeMillis, true);
    }

    /**
     * @param server where the partition gauges are, and where the source registers {@value #MBEAN}
     * @param epochMillis the wall clock, epoch ms (for {@link #getLastClearedEpochMs()})
     * @param pollThread whether {@link #onCleared} starts the poll thread (tests that drive {@link #poll} say false)
     */
    UnderReplicationPressure(MBeanServer server, LongSupplier epochMillis, boolean pollThread) {
        this.server = server;
        this.epochMillis = epochMillis;
        this.pollThread = pollThread;
    }

    /**
     * Reads {@value #POLL_MS} and {@value #TOPICS} from the broker's configuration. Thread: the broker's start-up thread,
     * before kpipe uses the source.
     *
     * @throws ConfigException for a bad value, which stops the broker's start naming the key
     */
    @Override
    public void configure(Map<String, ?> configs) {
        Object poll = configs.get(POLL_MS);
        if (poll != null) {
            long ms;
            try {
                ms = Long.parseLong(poll.toString().trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(POLL_MS, poll, "not a number of milliseconds");
            }
            if (ms < 1 || ms > 60_000) {
                throw new ConfigException(POLL_MS, poll, "must be 1 to 60000 ms");
            }
            pollMs = ms;
        }
        Object regex = configs.get(TOPICS);
        if (regex != null) {
            try {
                topics = Pattern.compile(regex.toString().trim());
            } catch (PatternSyntaxException e) {
                throw new ConfigException(TOPICS, regex, "not a regular expression: " + e.getDescription());
            }
        }
    }

    /** Broker-wide: never saturated (under-replication is a topic's matter). */
    @Override
    public boolean saturated() {
        return false;
    }

    @Override
    public boolean anyTopicSaturated() {
        return !saturated.isEmpty();
    }

    @Override
    public boolean saturated(String topic) {
        return saturated.contains(topic);
    }

    /**
     * Keeps the listener (the last one given) and starts the poll thread and the MBean, once.
     *
     * @param listener kpipe's wake-up, run on the poll thread after a poll in which a topic recovered
     */
    @Override
    public synchronized void onCleared(Runnable listener) {
        this.listener = listener;
        if (registered) {
            return;
        }
        registered = true;
        register();
        if (!pollThread) {
            return;
        }
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, THREAD);
            t.setDaemon(true);
            return t;
        });
        poller.scheduleWithFixedDelay(this::poll, 0, pollMs, TimeUnit.MILLISECONDS);
        LOG.info("under-replication pressure: following topics {} every {} ms", topics, pollMs);
    }

    /**
     * One poll: reads the gauges, publishes the saturated topics, logs the changes, and runs the listener if a topic
     * recovered. Thread: the poll thread (tests call it directly); never throws.
     */
    void poll() {
        Set<String> now;
        try {
            now = underReplicatedTopics();
        } catch (JMException | RuntimeException e) {
            faults.incrementAndGet();
            LOG.warn("under-replication pressure: cannot read the partition gauges; keeping the last state", e);
            return;
        }
        Set<String> before = saturated;
        saturated = now;
        polls.incrementAndGet();
        for (String t : now) {
            if (!before.contains(t)) {
                LOG.info("under-replication pressure: topic {} is under-replicated: its pipelined producers wait", t);
            }
        }
        boolean recovered = false;
        for (String t : before) {
            if (!now.contains(t)) {
                recovered = true;
                LOG.info("under-replication pressure: topic {} recovered: its producers are released", t);
            }
        }
        if (recovered) {
            lastClearedEpochMs = epochMillis.getAsLong();
            clears.incrementAndGet();
            try {
                listener.run();
            } catch (RuntimeException e) {
                faults.incrementAndGet();
                LOG.warn("under-replication pressure: the wake-up listener threw", e);
            }
        }
    }

    /** @return the followed topics with a partition this broker leads that is under-replicated now */
    private Set<String> underReplicatedTopics() throws JMException {
        Pattern followed = topics;
        Set<String> found = new HashSet<>();
        for (ObjectName gauge : server.queryNames(GAUGES, null)) {
            String topic = gauge.getKeyProperty("topic");
            if (topic == null
                    || found.contains(topic)
                    || !followed.matcher(topic).matches()) {
                continue;
            }
            Object value;
            try {
                value = server.getAttribute(gauge, "Value");
            } catch (InstanceNotFoundException e) {
                continue; // the partition left this broker between the query and the read
            }
            if (value instanceof Number n && n.intValue() > 0) {
                found.add(topic);
            }
        }
        return Set.copyOf(found);
    }

    private void register() {
        try {
            ObjectName name = name(MBEAN);
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(this, name);
        } catch (JMException e) {
            LOG.warn("under-replication pressure: cannot register {}", MBEAN, e);
        }
    }

    /** Stops the poll thread and unregisters the MBean (kpipe never calls it: the thread is a daemon). */
    @Override
    public synchronized void close() {
        if (poller != null) {
            poller.shutdownNow();
            try {
                poller.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            poller = null;
        }
        try {
            ObjectName name = name(MBEAN);
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
        } catch (JMException e) {
            LOG.debug("under-replication pressure: cannot unregister {}", MBEAN, e);
        }
    }

    @Override
    public String[] getSaturatedTopics() {
        String[] names = saturated.toArray(new String[0]);
        Arrays.sort(names);
        return names;
    }

    @Override
    public long getPolls() {
        return polls.get();
    }

    @Override
    public long getClears() {
        return clears.get();
    }

    @Override
    public long getLastClearedEpochMs() {
        return lastClearedEpochMs;
    }

    @Override
    public long getFaults() {
        return faults.get();
    }

    private static ObjectName name(String name) {
        try {
            return new ObjectName(name);
        } catch (JMException e) {
            throw new IllegalArgumentException(name, e);
        }
    }
}
