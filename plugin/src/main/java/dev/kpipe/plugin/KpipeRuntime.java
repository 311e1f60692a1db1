// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.classify.TopicPolicy;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.PipelineStats;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kpipe in one broker (one per broker, several in a JVM that runs several): the {@code kpipe.*} settings it runs with and, once its hooks are installed, the
 * pipelining state they feed. Applies the settings at start-up ({@link #start}) and again whenever Kafka's dynamic
 * broker config changes one of {@link KpipeConfig#RECONFIGURABLE_CONFIGS} ({@link #reconfigure}; KIP-226, through
 * {@code kafka.server.DynamicMetricsReporters}).
 *
 * <p>What a change does: {@code kpipe.enable=false} stops upgrades and drains every pipelined connection back to
 * classic ({@link PipelineCoordinator#enabled(boolean)}), {@code true} lets connections upgrade again; the per-connection
 * limits, the broker-wide byte budget, the purgatory threshold and the topic policy are replaced and apply from the next
 * check on each network thread. If the broker started with {@code kpipe.enable=false} the hooks are not installed
 * then; the first change to {@code kpipe.enable=true} installs them, in the background (attach and class
 * retransformation, as at start-up: about a second, more on a loaded machine), then applies the settings of the latest
 * change. If they cannot be installed, one ERROR is logged, the broker stays classic, and later changes do not
 * retry.
 *
 * <p>Thread-safety: {@link #start} and {@link #reconfigure} are serialised by this object's lock (Kafka calls them on
 * its start-up and config threads). Network and handler threads never take that lock: they read the new values from
 * the coordinator's, the classifier's and the budget's volatile fields, or the {@link AtomicInteger} threshold.
 */
final class KpipeRuntime {

    private static final Logger LOG = LoggerFactory.getLogger(KpipeRuntime.class);

    private final HookInstaller installer;
    private final String kafkaVersion;
    /** The broker's node id ({@code node.id}, or {@code broker.id}), for log lines and JMX names. */
    private final String nodeId;
    /** Closed with the broker ({@link #close}): nothing is installed or published any more. */
    private boolean closed;

    private final Executor runtimeInstalls;
    private boolean started;
    /** The settings last applied (at start, or by the last reconfiguration). */
    private KpipeConfig settings;
    /** Why the hooks could not be installed; they are never retried. */
    private String installFailure;
    /** A runtime install is under way (on {@link #runtimeInstalls}). */
    private boolean installing;

    private volatile PipelineCoordinator<Object, Object> coordinator;
    private ByteBudget budget;
    private AtomicInteger maxDelayedProduce;
    private volatile KpipeMetrics metrics;
    /** The counters, for the stop line; guarded by this. */
    private PipelineStats stats;
    /** The connection dump's MBean, or {@code null} while the hooks are not installed. Guarded by this. */
    private KpipeConnections connectionDump;
    /** The policy and storage pressure in use, closed when replaced or no longer used. */
    private final PluginInstances plugins = new PluginInstances();

    /**
     * @param installer installs the hooks
     * @param kafkaVersion the broker's Kafka version, for the log lines
     * @param runtimeInstalls runs the install when {@code kpipe.enable} is first set to true at runtime (attach and
     *     retransformation take about a second, more on a loaded machine: not on Kafka's config thread, which also
     *     publishes the cluster metadata to the broker); tests pass {@code Runnable::run}
     */
    KpipeRuntime(HookInstaller installer, String kafkaVersion, Executor runtimeInstalls) {
        this(installer, kafkaVersion, runtimeInstalls, "?");
    }

    /**
     * @param installer installs the hooks
     * @param kafkaVersion the broker's Kafka version, for the log lines
     * @param runtimeInstalls runs a runtime install (see above)
     * @param nodeId the broker's node id, for the log lines and the JMX names ({@link JmxNames})
     */
    KpipeRuntime(HookInstaller installer, String kafkaVersion, Executor runtimeInstalls, String nodeId) {
        this.installer = installer;
        this.kafkaVersion = kafkaVersion;
        this.runtimeInstalls = runtimeInstalls;
        this.nodeId = nodeId;
    }

    /** @return an executor running each task on a new daemon thread {@code kpipe-install} */
    static Executor installThread() {
        return task -> {
            Thread t = new Thread(task, "kpipe-install");
            t.setDaemon(true);
            t.start();
        };
    }

    /**
     * Applies the settings the broker starts with; installs the hooks if {@code kpipe.enable=true} (on this thread:
     * the broker's start-up). Only the first call does anything (combined broker+controller mode configures metric
     * reporters more than once).
     *
     * @param config the settings
     * @throws ConfigException if the hooks cannot be installed and {@code kpipe.fail.on.unsupported.broker=true}
     */
    synchronized void start(KpipeConfig config) {
        if (started || closed) {
            return;
        }
        if (!config.unknownKeys().isEmpty()) {
            LOG.warn(
                    "kpipe: unknown setting(s) {} ignored; kpipe's settings are {}",
                    config.unknownKeys(),
                    new java.util.TreeSet<>(KpipeConfig.CONFIG_DEF.names()));
        }
        if (!config.enabled()) {
            started = true;
            settings = config;
            LOG.info(
                    "kpipe {} disabled ({}=false): Kafka {} runs without pipelining on node {}",
                    KpipeVersion.get(),
                    KpipeConfig.ENABLE,
                    kafkaVersion,
                    nodeId);
            return;
        }
        Installed installed;
        try {
            installed = install(config);
        } catch (UnsupportedBrokerException e) {
            if (config.failOnUnsupportedBroker()) {
                // not started: a later configure of the same JVM refuses in the same way
                throw new ConfigException(e.getMessage() + "; the broker refuses to start because "
                        + KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER + "=true");
            }
            started = true;
            settings = config;
            installFailure = e.getMessage();
            LOG.error(
                    "{}; the broker runs without pipelining (set {}=true to refuse to start instead)",
                    e.getMessage(),
                    KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER);
            return;
        }
        started = true;
        settings = config;
        publish(installed);
        LOG.info(
                "kpipe {} started: Kafka {}, node {}, {}, settings {}",
                KpipeVersion.get(),
                kafkaVersion,
                nodeId,
                installed.how,
                config.effectiveSettings());
    }

    /**
     * Applies changed settings (see the class comment). Never throws for a broker that cannot be hooked: that is
     * logged, and the broker stays classic. Returns at once: a first enable at runtime installs the hooks on
     * {@link #runtimeInstalls}, then applies the settings of the latest change.
     *
     * @param config the broker's whole new configuration, already validated
     */
    synchronized void reconfigure(KpipeConfig config) {
        if (closed) {
            return;
        }
        if (!started) {
            start(config);
            return;
        }
        KpipeConfig old = settings;
        settings = config;
        PipelineCoordinator<Object, Object> pipeline = coordinator;
        if (pipeline != null) {
            apply(pipeline, old, config);
            return;
        }
        if (!config.enabled() || installing) {
            return; // an install under way applies the latest settings when it is done
        }
        if (installFailure != null) {
            LOG.error(
                    "kpipe: {}=true ignored: kpipe could not hook this broker ({}); it runs without pipelining",
                    KpipeConfig.ENABLE,
                    installFailure);
            return;
        }
        installing = true;
        runtimeInstalls.execute(() -> installAtRuntime(config));
    }

    /** Thread: {@link #runtimeInstalls}. Installs without the lock; then publishes and catches up with later changes. */
    private void installAtRuntime(KpipeConfig config) {
        long startNanos = Ticker.SYSTEM.nanos();
        Installed installed = null;
        String failure = null;
        try {
            installed = install(config);
        } catch (UnsupportedBrokerException e) {
            failure = e.getMessage();
        } catch (RuntimeException | LinkageError e) {
            failure = "kpipe failed to install its hooks: " + e;
        }
        synchronized (this) {
            installing = false;
            if (closed) {
                if (installed != null) {
                    installed.state.coordinator().enabled(false); // closed meanwhile: nothing pipelines
                }
                return;
            }
            if (installed == null) {
                installFailure = failure;
                LOG.error("{}; {}=true ignored: the broker runs without pipelining", failure, KpipeConfig.ENABLE);
                return;
            }
            publish(installed);
            LOG.info(
                    "kpipe {} started at runtime ({}=true altered) in {} ms: Kafka {}, node {}, {}, settings {}",
                    KpipeVersion.get(),
                    KpipeConfig.ENABLE,
                    (Ticker.SYSTEM.nanos() - startNanos) / 1_000_000,
                    kafkaVersion,
                    nodeId,
                    installed.how,
                    config.effectiveSettings());
            if (settings != config) {
                apply(installed.state.coordinator(), config, settings);
            }
        }
    }

    /** What an install made: the pipelining state, and how the hooks were installed (for the INFO line). */
    private record Installed(PipelineState state, String how) {}

    /** Builds the pipelining state for the settings and installs the hooks that feed it. Takes no lock. */
    private Installed install(KpipeConfig config) throws UnsupportedBrokerException {
        PipelineState state = PipelineState.build(config, plugins);
        String how;
        try {
            how = installer.install(config, state.coordinator(), plugins.observers(config), state.hookCounters());
        } catch (UnsupportedBrokerException | RuntimeException | LinkageError e) {
            plugins.closeAll(); // never used
            throw e;
        }
        return new Installed(state, how);
    }

    /** Guarded by this. */
    private void publish(Installed installed) {
        budget = installed.state.budget();
        maxDelayedProduce = installed.state.maxDelayedProduce();
        stats = installed.state.stats();
        synchronized (JmxNames.LOCK) { // the choice of names and the registrations, against the JVM's other brokers
            java.util.Map<String, String> tags = JmxNames.tags(nodeId);
            metrics = new KpipeMetrics(
                    installed.state.stats(), installed.state.budget(), installed.state.hookCounters(), tags);
            connectionDump = new KpipeConnections(installed.state.coordinator(), ConnectionDump.MAX_CONNECTIONS, tags);
            connectionDump.register();
        }
        coordinator = installed.state.coordinator();
    }

    /** Applies the dynamic settings that changed to the running coordinator. Guarded by this. */
    private void apply(PipelineCoordinator<Object, Object> pipeline, KpipeConfig old, KpipeConfig config) {
        Map<String, String> changes = changes(old, config);
        InflightLimits limits =
                new InflightLimits(config.maxInflightRequestsPerConnection(), config.maxInflightBytesPerConnection());
        if (!limits.equals(pipeline.limits())) {
            pipeline.limits(limits);
        }
        long capacity = config.maxInflightBytes();
        if (budget.capacity() != capacity) {
            budget.capacity(capacity, PipelineState.lowWatermark(capacity));
        }
        maxDelayedProduce.set(config.maxDelayedProduceRequests());
        if (changes.containsKey(KpipeConfig.TOPICS_INCLUDE) || changes.containsKey(KpipeConfig.TOPICS_EXCLUDE)) {
            plugins.replacePolicy(config.classificationPolicy(), p -> pipeline.topics(new TopicPolicy(p)));
        }
        for (PipelinedApi.Switch s : PipelinedApi.Switch.settings()) {
            if (changes.containsKey(s.key())) {
                pipeline.switchOn(s, config.isOn(s));
            }
        }
        if (pipeline.enabled() != config.enabled()) {
            pipeline.enabled(config.enabled());
        }
        if (!changes.isEmpty()) {
            LOG.info(
                    "kpipe settings changed at runtime: {}{}",
                    changes,
                    changes.containsKey(KpipeConfig.ENABLE) && !config.enabled()
                            ? "; pipelining is off: pipelined connections drain back to classic"
                            : "");
        }
    }

    /** @return the dynamic settings that differ, as {@code key -> "old -> new"}, in the definition order */
    private static Map<String, String> changes(KpipeConfig old, KpipeConfig now) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : KpipeConfig.RECONFIGURABLE_CONFIGS) {
            Object a = old.values().get(key);
            Object b = now.values().get(key);
            if (!Objects.equals(a, b)) {
                out.put(key, a + " -> " + b);
            }
        }
        return out;
    }

    /** @return the coordinator, or {@code null} while the hooks are not installed; thread: any */
    PipelineCoordinator<Object, Object> coordinator() {
        return coordinator;
    }

    /** @return the metrics, or {@code null} while the hooks are not installed; thread: any */
    KpipeMetrics metrics() {
        return metrics;
    }

    /** @return the byte budget, or {@code null} while the hooks are not installed */
    synchronized ByteBudget budget() {
        return budget;
    }

    /** @return the purgatory threshold in force, or -1 while the hooks are not installed */
    synchronized int maxDelayedProduceRequests() {
        return maxDelayedProduce == null ? -1 : maxDelayedProduce.get();
    }

    /** @return the broker's node id */
    String nodeId() {
        return nodeId;
    }

    /** @return the settings last applied, or {@code null} before {@link #start} */
    synchronized KpipeConfig settings() {
        return settings;
    }

    /**
     * Stops this broker's kpipe, with the broker (its metrics registry closes its reporters) or when kpipe is removed
     * from its {@code metric.reporters} at runtime: pipelining is turned off ({@link PipelineCoordinator#enabled
     * enabled(false)}: no connection upgrades any more, and pipelined ones drain back to classic, so that a broker that
     * goes on runs stock from then on, its connections intact), the metrics and the connection dump are unregistered
     * (freeing their JMX names), the extension instances in use are closed ({@link PluginInstances}), and one INFO line
     * says what it did over its life. Later calls do nothing. Thread: the broker's shutdown thread, or Kafka's config
     * thread.
     */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (coordinator == null) {
            plugins.closeAll();
            return;
        }
        coordinator.enabled(false);
        closeMetrics();
        plugins.closeAll();
        LOG.info(
                "kpipe {} stopped on node {}: {} requests pipelined, connections upgraded {} times",
                KpipeVersion.get(),
                nodeId,
                stats.pipelinedRequests(),
                stats.upgrades());
    }

    /** Unregisters the metrics and the connection dump. */
    synchronized void closeMetrics() {
        if (metrics != null) {
            metrics.close();
        }
        if (connectionDump != null) {
            connectionDump.unregister();
        }
    }
}
