// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.KafkaVersion;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.testkit.ContractCheck;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsContext;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bootstrap: named in the broker's {@code server.properties} as
 * {@code metric.reporters=dev.kpipe.plugin.KpipePlugin}, because metric reporters are the earliest
 * plugins Kafka instantiates and configures with the broker's whole configuration.
 *
 * <p>On the first {@link #configure} in the JVM (combined broker+controller mode configures
 * reporters more than once) it validates the {@code kpipe.*} settings, and with
 * {@code kpipe.enable=true} obtains an {@link java.lang.instrument.Instrumentation} (from {@code -javaagent}, else by
 * self-attach), checks the broker's hook points and installs the pipelining hooks on the broker
 * listeners (never the controller listener). It logs one INFO line, or one ERROR line if the broker
 * cannot be hooked (the broker then runs without pipelining, unless
 * {@code kpipe.fail.on.unsupported.broker=true}); after a self-attach the JVM warned about (JDK 21+, JEP 451), one
 * WARN more saying to add {@code -javaagent}.
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
public final class KpipePlugin implements MetricsReporter {

    private static final Logger LOG = LoggerFactory.getLogger(KpipePlugin.class);
    /** The JVM's kpipe (one per broker JVM, whatever the number of reporter instances). */
    private static final KpipeRuntime RUNTIME = new KpipeRuntime(
            KpipePlugin::installHooks,
            KafkaVersion.of(KpipePlugin.class.getClassLoader()),
            KpipeRuntime.installThread());

    /**
     * Thread: the broker's start-up thread, or Kafka's config thread when {@code metric.reporters}
     * is altered at runtime.
     *
     * @param configs the broker configuration
     * @throws ConfigException if a {@code kpipe.*} value is invalid (names the key), or if the broker
     *     cannot be hooked and {@code kpipe.fail.on.unsupported.broker=true}
     */
    @Override
    public void configure(Map<String, ?> configs) {
        KpipeConfig config = new KpipeConfig(configs);
        if (!listsJmxReporter(configs.get(CommonClientConfigs.METRIC_REPORTER_CLASSES_CONFIG))) {
            jmx = new JmxReporter();
            jmx.configure(configs);
        }
        RUNTIME.start(config);
    }

    /**
     * The JVM system property that routes the broker's events through the SPI's test kit ({@link ContractCheck}),
     * which logs each violation of the SPI's contract at ERROR ({@code kpipe: SPI contract violated: ...}). For tests:
     * the integration tests set it on every broker; it costs a map update per request.
     */
    public static final String CONTRACT_CHECK_PROPERTY = "kpipe.spi.contract.check";

    /**
     * Installs the hooks (the {@link KpipeRuntime.HookInstaller} of a real broker): the instrumentation from {@code
     * -javaagent}, else by self-attach ({@link AgentInstall}); where the JVM warned about the attach (JEP 451), one
     * WARN saying what to add. Thread: the caller of {@link KpipeRuntime#start} or {@link KpipeRuntime#reconfigure}.
     */
    private static String installHooks(KpipeConfig config, PipelineCoordinator<Object, Object> pipeline)
            throws UnsupportedBrokerException {
        ClassLoader loader = KpipePlugin.class.getClassLoader();
        Set<String> listeners = new TreeSet<>(config.pipelinedListeners());
        AgentInstall.Agent agent = AgentInstall.obtain();
        NetworkEventListener<Object, Object> events = pipeline;
        if (Boolean.getBoolean(CONTRACT_CHECK_PROPERTY)) {
            events = new ContractCheck<>(pipeline, v -> LOG.error("kpipe: SPI contract violated: {}", v));
            LOG.debug( // DEBUG: kpipe's INFO is its start line alone (AgentLoadingIT)
                    "kpipe: the broker's events pass through the SPI's contract check (-D{}=true)",
                    CONTRACT_CHECK_PROPERTY);
        }
        Interceptor.install(agent.instrumentation(), loader, events, listeners::contains);
        agent.advice().ifPresent(LOG::warn);
        return "install mode " + agent.mode() + ", listeners=" + listeners;
    }

    /** @return kpipe's version, e.g. {@code 0.1.0} */
    public static String version() {
        try (InputStream in = KpipePlugin.class.getResourceAsStream("kpipe-version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** @return the JVM's pipelining coordinator, or {@code null} if kpipe is not installed */
    static PipelineCoordinator<Object, Object> coordinator() {
        return RUNTIME.coordinator();
    }

    /** @return the JVM's kpipe metrics, or {@code null} if kpipe is not installed */
    static KpipeMetrics metrics() {
        return RUNTIME.metrics();
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
        new KpipeConfig(configs);
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
        RUNTIME.reconfigure(new KpipeConfig(configs));
    }

    /**
     * Thread: the broker's shutdown (Kafka closes its metric reporters). Closes the {@link JmxReporter} this instance
     * stands in for, and the extension instances kpipe uses ({@link PluginInstances}).
     */
    @Override
    public void close() {
        if (jmx != null) {
            jmx.close();
        }
        RUNTIME.close();
    }
}
