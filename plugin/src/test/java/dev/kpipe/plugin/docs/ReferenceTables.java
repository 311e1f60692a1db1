// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.docs;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.plugin.KpipeConfig;
import dev.kpipe.plugin.KpipeMetrics;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pipeline.WaitReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.ConfigKey;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;

/**
 * Renders the README's reference tables from the code: the settings from {@link KpipeConfig#CONFIG_DEF} (with {@link
 * KpipeConfig#UNITS} and {@link KpipeConfig#RECONFIGURABLE_CONFIGS}), the metrics from the {@link Metrics} registry
 * that {@link KpipeMetrics} fills ({@code MetricName.description()}), and puts them between the README's markers
 * {@code <!-- generated:NAME -->} and {@code <!-- /generated:NAME -->}. Stateless; any thread.
 */
final class ReferenceTables {
    /** Kafka's own metric in every registry (the count of metrics); not kpipe's. */
    private static final String KAFKA_METRICS_COUNT_GROUP = "kafka-metrics-count";

    private ReferenceTables() {}

    /** @return the settings table, Markdown, one row per key in definition order */
    static String settings() {
        StringBuilder sb = new StringBuilder();
        sb.append("| key | type | default | unit | range | dynamic | meaning |\n");
        sb.append("|---|---|---|---|---|---|---|\n");
        for (ConfigKey k : KpipeConfig.CONFIG_DEF.configKeys().values()) {
            String unit = KpipeConfig.UNITS.getOrDefault(k.name, "");
            sb.append("| `")
                    .append(k.name)
                    .append("` | ")
                    .append(k.type.toString().toLowerCase(Locale.ROOT))
                    .append(" | ")
                    .append(defaultValue(k, unit))
                    .append(" | ")
                    .append(unit)
                    .append(" | ")
                    .append(range(k))
                    .append(" | ")
                    .append(KpipeConfig.RECONFIGURABLE_CONFIGS.contains(k.name) ? "yes" : "no")
                    .append(" | ")
                    .append(cell(k.documentation))
                    .append(" |\n");
        }
        return sb.toString();
    }

    /**
     * @return the metrics tables, Markdown: per metrics group its JMX object name, then one row per metric by name, the
     *     per-reason wait counters ({@link WaitReason#metricName()}) folded into one row that names the reasons
     */
    static String metrics() {
        Map<String, Map<String, String>> byGroup = new TreeMap<>();
        try (KpipeMetrics m = new KpipeMetrics(
                new PipelineStats(), new ByteBudget(1024, 900, Ticker.SYSTEM), new HookCounters(), Map.of())) {
            for (KafkaMetric metric : m.registry().metrics().values()) {
                String group = metric.metricName().group();
                if (!group.equals(KAFKA_METRICS_COUNT_GROUP)) {
                    byGroup.computeIfAbsent(group, g -> new TreeMap<>())
                            .put(metric.metricName().name(), metric.metricName().description());
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Map<String, String>> g : byGroup.entrySet()) {
            if (sb.length() > 0) {
                sb.append('\n');
            }
            sb.append("`")
                    .append(KpipeMetrics.JMX_PREFIX)
                    .append(":type=")
                    .append(g.getKey())
                    .append("`:\n\n");
            sb.append("| metric | meaning |\n|---|---|\n");
            Set<String> waits = new TreeSet<>();
            StringBuilder reasons = new StringBuilder();
            for (WaitReason r : WaitReason.values()) {
                if (r.counted() && g.getValue().containsKey(r.metricName())) {
                    waits.add(r.metricName());
                    reasons.append(reasons.length() == 0 ? "" : ", ")
                            .append('`')
                            .append(r.label())
                            .append('`');
                }
            }
            Set<String> perApi = new TreeSet<>();
            StringBuilder apis = new StringBuilder();
            for (PipelinedApi api : PipelinedApi.values()) {
                if (g.getValue().containsKey(KpipeMetrics.pipelinedMetricName(api))) {
                    perApi.add(KpipeMetrics.pipelinedMetricName(api));
                    perApi.add(KpipeMetrics.inflightMetricName(api));
                    apis.append(apis.length() == 0 ? "" : ", ")
                            .append('`')
                            .append(api.metricLabel())
                            .append('`');
                }
            }
            g.getValue().forEach((name, description) -> {
                if (!waits.contains(name) && !perApi.contains(name)) {
                    sb.append("| `")
                            .append(name)
                            .append("` | ")
                            .append(cell(description))
                            .append(" |\n");
                }
            });
            if (!perApi.isEmpty()) {
                sb.append(
                                "| `pipelined-<api>-total`, `inflight-<api>-per-connection-max` | Per row of the table of pipelined"
                                        + " APIs (")
                        .append(apis)
                        .append(
                                "): requests of that API admitted on pipelined connections since start, and the most of them"
                                        + " in flight at once on one connection since start (above 1: that API was pipelined);"
                                        + " the table: [docs/design.md](docs/design.md#the-table-of-pipelined-apis). |\n");
            }
            if (!waits.isEmpty()) {
                sb.append("| `wait-<reason>-total` | Waits of pipelined connections, one counter per reason (")
                        .append(reasons)
                        .append(
                                "; the connection dump's `waiting=` names), each counted once when a wait starts; what each"
                                        + " means: [docs/monitoring.md](docs/monitoring.md). |\n");
            }
        }
        return sb.toString();
    }

    /**
     * @param readme the README's text
     * @param name the region's name ({@code settings}, {@code metrics})
     * @param body what goes between the markers
     * @return the README with that region replaced
     * @throws IllegalArgumentException if the README lacks the region's markers
     */
    static String replaceRegion(String readme, String name, String body) {
        String open = "<!-- generated:" + name + " -->";
        String close = "<!-- /generated:" + name + " -->";
        int a = readme.indexOf(open);
        int b = readme.indexOf(close);
        if (a < 0 || b < a) {
            throw new IllegalArgumentException("README.md has no region " + open + " ... " + close);
        }
        return readme.substring(0, a + open.length()) + "\n" + body + readme.substring(b);
    }

    /**
     * @param readme the README's text
     * @param name the region's name
     * @return what stands between the region's markers, or null if there is no such region
     */
    static String region(String readme, String name) {
        String open = "<!-- generated:" + name + " -->";
        int a = readme.indexOf(open);
        int b = readme.indexOf("<!-- /generated:" + name + " -->");
        return a < 0 || b < a ? null : readme.substring(a + open.length() + 1, b);
    }

    private static String defaultValue(ConfigKey k, String unit) {
        Object d = k.defaultValue;
        if (d == null || d == ConfigDef.NO_DEFAULT_VALUE) {
            return "none";
        }
        if (d instanceof List<?> l && l.isEmpty() || d.toString().isEmpty()) {
            return "empty";
        }
        String s = "`"
                + (d instanceof List<?> l
                        ? String.join(",", l.stream().map(String::valueOf).toList())
                        : d) + "`";
        if (unit.equals("bytes")
                && d instanceof Number n
                && n.longValue() >= 1024 * 1024
                && n.longValue() % (1024 * 1024) == 0) {
            s += " (" + n.longValue() / (1024 * 1024) + " MiB)";
        }
        return s;
    }

    private static String range(ConfigKey k) {
        if (k.validator != null) { // Kafka's Range prints [1,...,1000]; kpipe's regex validator a phrase
            String v = k.validator.toString();
            return v.startsWith("[") ? "`" + v + "`" : v;
        }
        return switch (k.type) {
            case BOOLEAN -> "`true`, `false`";
            case CLASS -> "a class name";
            case LIST -> "comma-separated";
            default -> "";
        };
    }

    private static String cell(String text) {
        List<String> lines = new ArrayList<>(List.of(text.split("\n")));
        return String.join(" ", lines.stream().map(String::strip).toList()).replace("|", "\\|");
    }
}
