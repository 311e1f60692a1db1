// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * kpipe's Grafana dashboard ({@code monitoring/grafana/kpipe-dashboard.json}) as the tests read it: its panels, the
 * PromQL of their queries and of its template variables, and the metric names those use.
 */
final class KpipeDashboard {
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> KEYWORDS = Set.of(
            "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,");

    /** The parsed JSON document. */
    final Map<String, Object> json;

    private KpipeDashboard(Map<String, Object> json) {
        this.json = json;
    }

    /** @return the dashboard in {@code kpipe.it.monitoring.dir} (the repository's monitoring/) */
    static KpipeDashboard load() {
        return load(monitoringDir().resolve("grafana/kpipe-dashboard.json"));
    }

    /** @return the repository's monitoring/ folder, from {@code kpipe.it.monitoring.dir} */
    static Path monitoringDir() {
        String dir = System.getProperty("kpipe.it.monitoring.dir");
        if (dir == null) {
            throw new IllegalStateException("kpipe.it.monitoring.dir is not set (the build sets it)");
        }
        return Path.of(dir);
    }

    @SuppressWarnings("unchecked")
    static KpipeDashboard load(Path file) {
        try {
            return new KpipeDashboard(new ObjectMapper().readValue(file.toFile(), Map.class));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return every panel, those inside collapsed rows too */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> panels() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object p : (List<Object>) json.get("panels")) {
            Map<String, Object> panel = (Map<String, Object>) p;
            out.add(panel);
            Object nested = panel.get("panels");
            if (nested instanceof List<?> l) {
                l.forEach(n -> out.add((Map<String, Object>) n));
            }
        }
        return out;
    }

    /** @return the PromQL of every panel query ({@code targets[].expr}) */
    @SuppressWarnings("unchecked")
    List<String> exprs() {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> panel : panels()) {
            Object targets = panel.get("targets");
            if (targets instanceof List<?> l) {
                for (Object t : l) {
                    Object expr = ((Map<String, Object>) t).get("expr");
                    if (expr != null) {
                        out.add((String) expr);
                    }
                }
            }
        }
        return out;
    }

    /** @return every metric name the panel queries and the template variables' {@code label_values(...)} use */
    @SuppressWarnings("unchecked")
    Set<String> metricNames() {
        Set<String> out = new TreeSet<>();
        for (String e : exprs()) {
            out.addAll(metricNames(e));
        }
        Map<String, Object> templating = (Map<String, Object>) json.get("templating");
        for (Object v : (List<Object>) templating.get("list")) {
            Object q = ((Map<String, Object>) v).get("query");
            String query = q instanceof Map<?, ?> m ? (String) m.get("query") : (String) q;
            Matcher m = LABEL_VALUES.matcher(query == null ? "" : query);
            while (m.find()) {
                out.add(m.group(1));
            }
        }
        return out;
    }

    /**
     * The metric names a PromQL expression selects: identifiers that are not functions (followed by {@code (}),
     * keywords, label names inside {@code {...}} or {@code by (...)}, range or Grafana variables.
     *
     * @param expr a PromQL expression
     * @return its metric names
     */
    static Set<String> metricNames(String expr) {
        String e = expr.replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"")
                .replaceAll("\\{[^}]*}", " ")
                .replaceAll("\\[[^\\]]*\\]", " ")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
                .replaceAll("\\$[a-zA-Z_]+", " ");
        Set<String> out = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(e);
        while (m.find()) {
            String id = m.group();
            int next = m.end();
            while (next < e.length() && Character.isWhitespace(e.charAt(next))) {
                next++;
            }
            boolean function = next < e.length() && e.charAt(next) == '(';
            boolean partOfNumber =
                    m.start() > 0 && (Character.isDigit(e.charAt(m.start() - 1)) || e.charAt(m.start() - 1) == '.');
            if (!function && !partOfNumber && !KEYWORDS.contains(id)) {
                out.add(id);
            }
        }
        return out;
    }
}
