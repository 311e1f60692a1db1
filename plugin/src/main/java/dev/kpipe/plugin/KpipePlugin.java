// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.KafkaVersion;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.spi.NetworkEventListener;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsContext;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker's kpipe: named in the broker's {@code server.properties} as
 * {@code metric.reporters=dev.kpipe.plugin.KpipePlugin}, because metric reporters are the earliest plugins Kafka
 * instantiates and configures with the broker's whole configuration, one instance per broker, closed with the broker's
 * metrics. Each broker of a JVM has its own instance and so its own kpipe ({@link KpipeRuntime}): settings, byte
 * budget, metrics, dynamic configuration and connection dump. The advice is installed once per JVM and finds each
 * broker's kpipe through its metrics registry ({@link BrokerHooks}).
 *
 * <p>On {@link #configure} it validates the {@code kpipe.*} settings (the broker's own, over the JVM-wide defaults of
 * {@link JvmSettings}), and with {@code kpipe.enable=true} obtains an {@link java.lang.instrument.Instrumentation}
 * (from {@code -javaagent}, else by self-attach), installs the advice if this JVM has none yet, and points its
 * broker's hooks at a new pipelining coordinator for the broker's listeners (never the controller listener). It logs
 * one INFO line, or one ERROR line if the broker cannot be hooked (the broker then runs without pipelining, unless
 * {@code kpipe.fail.on.unsupported.broker=true}); after a self-attach the JVM warned about (JDK 21+, JEP 451), one
 * WARN more saying to add {@code -javaagent}. {@link #close} stops it with one INFO line.
 *
 * <p>As a {@link org.apache.kafka.common.Reconfigurable} (every {@link MetricsReporter} is one) it
 * lets Kafka's dynamic broker config (KIP-226: {@code kafka-configs --alter --entity-type brokers},
 * per broker or {@code --entity-default}, i.e. {@code Admin.incrementalAlterConfigs} on a
 * {@code BROKER} resource) change {@link KpipeConfig#RECONFIGURABLE_CONFIGS} without a restart:
 * Kafka's {@code DynamicMetricsReporters} calls {@link #validateReconfiguration} on the broker that
 * receives the request (a bad value fails the request with the key named, and nothing changes), then
 * every broker calls {@link #reconfigure} when the change reaches it through the metadata log (see
 * {@link KpipeRuntime} for what each change does).
 *
 * <p>As a metrics reporter it stands in for Kafka's default {@link JmxReporter} when
 * {@code metric.reporters} does not name it (the broker's own MBeans stay visible); kpipe's own
 * metrics live in {@link KpipeMetrics}.
 */
public final class KpipePlugin implements MetricsReporter, BrokerHooks.Owner {

    private static final Logger LOG = LoggerFactory.getLogger(KpipePlugin.class);

    /** Whether this instance stands in for Kafka's {@link JmxReporter} when {@code metric.reporters} lacks it. */
    private final boolean jmxStandIn;
    /** The broker calls the SPI itself ({@link KpipeNetworkListener}): no advice is installed. */
    private final boolean brokerCallsSpi;
    /** This broker's kpipe, from the first {@link #configure}. */
    private volatile KpipeRuntime runtime;
    /** Installs this broker's hooks and then holds them, from the first {@link #configure}. */
    private volatile BrokerHookInstaller installer;
    /** A newer kpipe of the same registry took over ({@link #superseded}). */
    private final java.util.concurrent.atomic.AtomicBoolean superseded =
            new java.util.concurrent.atomic.AtomicBoolean();

    /** The instance Kafka creates for a broker that names it in {@code metric.reporters}. */
    public KpipePlugin() {
        this(true);
    }

    private KpipePlugin(boolean jmxStandIn) {
        this(jmxStandIn, false);
    }

    /** For {@link KpipeNetworkListener}: a kpipe whose broker calls the SPI itself, with no advice. */
    KpipePlugin(boolean jmxStandIn, boolean brokerCallsSpi) {
        this.jmxStandIn = jmxStandIn;
        this.brokerCallsSpi = brokerCallsSpi;
    }

    /**
     * Thread: the broker's start-up thread, or Kafka's config thread when {@code metric.reporters}
     * is altered at runtime. A second call on the same instance does nothing.
     *
     * @param configs the broker configuration
     * @throws ConfigException if a {@code kpipe.*} value is invalid (names the key), or if the broker
     *     cannot be hooked and {@code kpipe.fail.on.unsupported.broker=true}
     */
    @Override
    public void configure(Map<String, ?> configs) {
        KpipeConfig config = new KpipeConfig(JvmSettings.withDefaults(configs, JvmSettings.defaults()));
        synchronized (this) {
            if (runtime != null) {
                return;
            }
            if (jmx == null
                    && jmxStandIn
                    && !listsJmxReporter(configs.get(CommonClientConfigs.METRIC_REPORTER_CLASSES_CONFIG))) {
                jmx = new JmxReporter(); // a controller-only node too: its own metrics stay in JMX
                jmx.configure(configs);
            }
            if (controllerOnly(configs)) { // its listeners are controller listeners, never pipelined
                LOG.info(
                        "kpipe {}: node {} is a controller only, it has nothing to pipeline",
                        version(),
                        nodeId(configs));
                return;
            }
            if (!brokerCallsSpi && namesNetworkListener(configs)) {
                LOG.info(
                        "kpipe {}: node {} runs kpipe as its {}; this reporter installs nothing",
                        version(),
                        nodeId(configs),
                        KpipeNetworkListener.BROKER_SETTING);
                return;
            }
            String nodeId = nodeId(configs);
            installer = new BrokerHookInstaller(nodeId, brokerCallsSpi);
            runtime = new KpipeRuntime(
                    installer,
                    KafkaVersion.of(KpipePlugin.class.getClassLoader()),
                    KpipeRuntime.installThread(),
                    nodeId);
        }
        runtime.start(config);
    }

    /** The class a broker with kpipe's reference patch creates from {@value KpipeNetworkListener#BROKER_SETTING}. */
    static final String NETWORK_LISTENER_CLASS = "dev.kpipe.plugin.KpipeNetworkListener";

    /** @return whether a broker configuration names {@link KpipeNetworkListener} in its listener setting */
    static boolean namesNetworkListener(Map<String, ?> configs) {
        Object name = configs.get(KpipeNetworkListener.BROKER_SETTING);
        return name != null && NETWORK_LISTENER_CLASS.equals(name.toString().trim());
    }

    /** @return whether {@code process.roles} names the controller role only (KRaft) */
    static boolean controllerOnly(Map<String, ?> configs) {
        Object roles = configs.get("process.roles");
        return roles != null
                && !roles.toString().toLowerCase(java.util.Locale.ROOT).contains("broker");
    }

    /** @return the broker's node id: {@code node.id}, else {@code broker.id} (Kafka sets it for its reporters), else ? */
    static String nodeId(Map<String, ?> configs) {
        Object id = configs.get("node.id");
        if (id == null) {
            id = configs.get("broker.id");
        }
        return id == null ? "?" : id.toString().trim();
    }

    @Override
    public BrokerHooks brokerHooks() {
        BrokerHookInstaller i = installer;
        return i == null ? null : i.hooks();
    }

    /**
     * A newer kpipe reporter of the same broker registry took over (a broker restarted inside a combined node, whose
     * registry outlives it; or a reporter named in {@code metric.reporters} after the JVM-wide attach): this one stops
     * ({@link KpipeRuntime#close}). Thread: a network or request handler thread.
     */
    @Override
    public void superseded() {
        KpipeRuntime r = runtime;
        if (r != null && superseded.compareAndSet(false, true)) {
            LOG.info("kpipe {}: a newer kpipe of node {} took over; this one stops", version(), r.nodeId());
            r.close();
        }
    }

    /**
     * Finds a broker's kpipe from outside the broker: an embedding test reads its metrics this way ({@code
     * KpipePlugin.of(broker.metrics())}). Thread: any.
     *
     * @param brokerMetrics the broker's metrics registry ({@code BrokerServer.metrics()}, {@code KafkaBroker.metrics()})
     * @return the broker's kpipe reporter, whether named in its {@code metric.reporters} or attached for every broker of
     *     the JVM; empty if it has none
     */
    public static Optional<KpipePlugin> of(Metrics brokerMetrics) {
        synchronized (brokerMetrics) { // as Metrics.addReporter
            for (MetricsReporter r : brokerMetrics.reporters()) {
                if (r instanceof KpipePlugin k && k.runtime != null) {
                    return Optional.of(k);
                }
            }
        }
        return Optional.empty();
    }

    /**
     * @return this broker's kpipe metrics registry (group {@value KpipeMetrics#GROUP}), or empty while kpipe does not
     *     run on it ({@code kpipe.enable=false}, a broker kpipe cannot hook, or closed); thread: any
     */
    public Optional<Metrics> kpipeMetrics() {
        KpipeRuntime r = runtime;
        KpipeMetrics m = r == null ? null : r.metrics();
        return m == null ? Optional.empty() : Optional.of(m.registry());
    }

    /**
     * Attaches a kpipe to a broker whose {@code metric.reporters} names none ({@code KpipeAgent.startEveryBroker}): a
     * reporter configured from the JVM-wide defaults and the broker's own configuration, added to the broker's metrics
     * so that it closes with them. Controller-only nodes get none. A bad setting is logged at ERROR naming the key, and the
     * broker runs without pipelining. Thread: the broker's first network (or request handler) thread to run, holding
     * the monitor of its metrics registry.
     *
     * @return the broker's hooks, or {@code null}
     */
    static BrokerHooks attach(Metrics metrics, Map<String, ?> brokerConfig) {
        KpipePlugin plugin = new KpipePlugin(false);
        if (!controllerOnly(brokerConfig)) {
            try {
                plugin.configure(brokerConfig);
            } catch (RuntimeException | LinkageError e) {
                // a bad setting, or an extension that fails to load: the broker runs classic. The reporter is added
                // anyway, without a runtime, so that the broker's threads find it and look no further.
                LOG.error("kpipe: {}; node {} runs without pipelining", e.getMessage(), nodeId(brokerConfig), e);
                plugin.close();
                plugin.runtime = null;
            }
        }
        metrics.addReporter(plugin);
        return plugin.brokerHooks();
    }

    /** @return kpipe's version, e.g. {@code 0.1.0} */
    public static String version() {
        return KpipeVersion.get();
    }

    /**
     * Kafka's default {@code metric.reporters} is {@link JmxReporter}; naming only kpipe there would
     * silently drop the broker's Kafka-metrics MBeans (quota and request metrics). So when the list
     * does not name {@code JmxReporter}, each kpipe reporter instance forwards to one of its own.
     */
    private JmxReporter jmx;

    private static boolean listsJmxReporter(Object reporters) {
        return reporters != null && reporters.toString().contains(JmxReporter.class.getName());
    }

    @Override
    public void contextChange(MetricsContext metricsContext) {
        if (jmx != null) {
            jmx.contextChange(metricsContext);
        }
    }

    @Override
    public void init(List<KafkaMetric> metrics) {
        if (jmx != null) {
            jmx.init(metrics);
        }
    }

    @Override
    public void metricChange(KafkaMetric metric) {
        if (jmx != null) {
            jmx.metricChange(metric);
        }
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
        if (jmx != null) {
            jmx.metricRemoval(metric);
        }
    }

    /**
     * @return {@link KpipeConfig#RECONFIGURABLE_CONFIGS}, and the keys of the {@link JmxReporter} this
     *     instance stands in for, if any; thread: any
     */
    @Override
    public Set<String> reconfigurableConfigs() {
        if (jmx == null) {
            return KpipeConfig.RECONFIGURABLE_CONFIGS;
        }
        Set<String> keys = new HashSet<>(KpipeConfig.RECONFIGURABLE_CONFIGS);
        keys.addAll(jmx.reconfigurableConfigs());
        return keys;
    }

    /**
     * Checks the new configuration before Kafka accepts a dynamic change: every {@code kpipe.*} value
     * is parsed as at start-up. Changes nothing. Thread: the request handler thread that serves the
     * {@code IncrementalAlterConfigs} request, or Kafka's config thread just before
     * {@link #reconfigure}.
     *
     * @param configs the broker's whole configuration with the change applied
     * @throws ConfigException if a value is invalid; the message names the key, the value and the
     *     allowed values, and Kafka fails the request with it
     */
    @Override
    public void validateReconfiguration(Map<String, ?> configs) throws ConfigException {
        if (jmx != null) {
            jmx.validateReconfiguration(configs);
        }
        new KpipeConfig(JvmSettings.withDefaults(configs, JvmSettings.defaults()));
    }

    /**
     * Applies a dynamic change of {@link KpipeConfig#RECONFIGURABLE_CONFIGS} (see {@link KpipeRuntime}).
     * Thread: Kafka's config thread (the metadata publisher), holding Kafka's config lock; returns
     * at once (a first enable on a broker started disabled installs the hooks on a thread of its
     * own); the network threads pick up the new values without locks.
     *
     * @param configs the broker's whole configuration with the change applied
     * @throws ConfigException if a value is invalid (already rejected by
     *     {@link #validateReconfiguration}; nothing changes then)
     */
    @Override
    public void reconfigure(Map<String, ?> configs) {
        if (jmx != null) {
            jmx.reconfigure(configs);
        }
        KpipeRuntime r = runtime;
        if (r != null) {
            r.reconfigure(new KpipeConfig(JvmSettings.withDefaults(configs, JvmSettings.defaults())));
        }
    }

    /**
     * Stops this broker's kpipe ({@link KpipeRuntime#close}: its hooks, metrics and connection dump, and the extension
     * instances it uses, {@link PluginInstances}), and the {@link JmxReporter} this instance stands in for. Thread: the
     * broker's shutdown (Kafka closes its metric reporters).
     */
    @Override
    public void close() {
        KpipeRuntime r = runtime;
        if (r != null) {
            r.close();
        }
        if (jmx != null) {
            jmx.close();
        }
    }

    /** @return the listener this broker's events go to, or {@code null} while kpipe does not run; thread: any */
    NetworkEventListener<Object, Object> events() {
        BrokerHookInstaller i = installer;
        return i == null ? null : i.events();
    }

    /** @return this broker's pipelining coordinator, or {@code null} if kpipe is not installed on it */
    PipelineCoordinator<Object, Object> coordinator() {
        KpipeRuntime r = runtime;
        return r == null ? null : r.coordinator();
    }

    /** @return this broker's kpipe metrics, or {@code null} if kpipe is not installed on it */
    KpipeMetrics metrics() {
        KpipeRuntime r = runtime;
        return r == null ? null : r.metrics();
    }
}
