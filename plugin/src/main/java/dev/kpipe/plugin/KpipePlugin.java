package dev.kpipe.plugin;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.KafkaVersion;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.classify.TopicPolicy;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pressure.BrokerQueuePressure;
import dev.kpipe.spi.StoragePressure;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import net.bytebuddy.agent.ByteBuddyAgent;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.MetricsContext;
import org.apache.kafka.common.metrics.KafkaMetric;
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
 * {@code kpipe.enable=true} obtains an {@link Instrumentation} (from {@code -javaagent}, else by
 * self-attach), checks the broker's hook points and installs the pipelining hooks on the broker
 * listeners (never the controller listener). It logs one INFO line, or one ERROR line if the broker
 * cannot be hooked (the broker then runs without pipelining, unless
 * {@code kpipe.fail.on.unsupported.broker=true}).
 *
 * <p>As a metrics reporter it stands in for Kafka's default {@link JmxReporter} when
 * {@code metric.reporters} does not name it (the broker's own MBeans stay visible); kpipe's own
 * metrics live in {@link KpipeMetrics}.
 */
public final class KpipePlugin implements MetricsReporter {

    private static final Logger LOG = LoggerFactory.getLogger(KpipePlugin.class);
    private static final Object LOCK = new Object();
    private static boolean started;
    private static PipelineCoordinator coordinator;
    private static KpipeMetrics metrics;

    /**
     * Thread: the broker's start-up thread.
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
        synchronized (LOCK) {
            if (started) {
                return;
            }
            start(config);
            started = true;
        }
    }

    private static void start(KpipeConfig config) {
        ClassLoader loader = KpipePlugin.class.getClassLoader();
        String kafkaVersion = KafkaVersion.of(loader);
        if (!config.enabled()) {
            LOG.info("kpipe {} disabled ({}=false): Kafka {} runs without pipelining",
                version(), KpipeConfig.ENABLE, kafkaVersion);
            return;
        }
        Set<String> listeners = new TreeSet<>(config.pipelinedListeners());
        Instrumentation inst = KpipeAgent.instrumentation();
        String mode = "javaagent";
        if (inst == null) {
            mode = "attach";
            try {
                inst = ByteBuddyAgent.install();
            } catch (RuntimeException e) {
                unsupported(config, "kpipe cannot attach to the broker JVM (" + e.getMessage()
                    + "); start it with -javaagent:<kpipe jar> in KAFKA_OPTS");
                return;
            }
        }
        PipelineStats stats = new PipelineStats();
        long budgetBytes = config.maxInflightBytes();
        ByteBudget budget = new ByteBudget(budgetBytes, budgetBytes * 9 / 10);
        PipelineCoordinator pipeline = new PipelineCoordinator(
            new RequestClassifier(new TopicPolicy(config.topicsInclude(), config.topicsExclude())),
            new InflightLimits(config.maxInflightRequestsPerConnection(), config.maxInflightBytesPerConnection()),
            budget, stats);
        StoragePressure pluginPressure = config.storagePressure();
        if (pluginPressure != null) {
            pipeline.pressure(pluginPressure);
        }
        int maxDelayedProduce = config.maxDelayedProduceRequests();
        pipeline.pressureFactory(load -> new BrokerQueuePressure(load, maxDelayedProduce, pluginPressure));
        try {
            Interceptor.install(inst, loader, pipeline, listeners::contains);
        } catch (UnsupportedBrokerException e) {
            unsupported(config, e.getMessage());
            return;
        }
        coordinator = pipeline;
        metrics = new KpipeMetrics(stats, budget);
        LOG.info("kpipe {} started: Kafka {}, install mode {}, listeners={}, settings {}",
            version(), kafkaVersion, mode, listeners, config.effectiveSettings());
    }

    private static void unsupported(KpipeConfig config, String problem) {
        if (config.failOnUnsupportedBroker()) {
            throw new ConfigException(problem + "; the broker refuses to start because "
                + KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER + "=true");
        }
        LOG.error("{}; the broker runs without pipelining (set {}=true to refuse to start instead)",
            problem, KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER);
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
    static PipelineCoordinator coordinator() {
        synchronized (LOCK) {
            return coordinator;
        }
    }

    /** @return the JVM's kpipe metrics, or {@code null} if kpipe is not installed */
    static KpipeMetrics metrics() {
        synchronized (LOCK) {
            return metrics;
        }
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

    @Override
    public Set<String> reconfigurableConfigs() {
        return jmx != null ? jmx.reconfigurableConfigs() : Set.of();
    }

    @Override
    public void validateReconfiguration(Map<String, ?> configs) throws ConfigException {
        if (jmx != null) {
            jmx.validateReconfiguration(configs);
        }
    }

    @Override
    public void reconfigure(Map<String, ?> configs) {
        if (jmx != null) {
            jmx.reconfigure(configs);
        }
    }

    @Override
    public void close() {
        if (jmx != null) {
            jmx.close();
        }
    }
}
