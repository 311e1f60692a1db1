// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Without a broker: the Grafana dashboard parses, is importable (schema version, a {@code DS_PROMETHEUS} data source
 * input every query uses), has the panels an operator needs, and its queries name only documented series; the series
 * table of docs/monitoring.md is exactly {@link PrometheusSeries#all()}. {@link PrometheusExporterIT} checks the same
 * names against a real scrape.
 */
class DashboardTest {

    @Test
    @SuppressWarnings("unchecked")
    void theDashboardIsImportable() {
        KpipeDashboard d = KpipeDashboard.load();
        Object schema = d.json.get("schemaVersion");
        assertTrue(schema instanceof Number v && v.intValue() >= 36, "schemaVersion " + schema);
        List<Object> inputs = (List<Object>) d.json.get("__inputs");
        assertEquals(1, inputs.size());
        Map<String, Object> input = (Map<String, Object>) inputs.get(0);
        assertEquals("DS_PROMETHEUS", input.get("name"));
        assertEquals("datasource", input.get("type"));
        assertEquals("prometheus", input.get("pluginId"));
        assertTrue(d.json.get("id") == null, "no instance id: Grafana assigns one on import");
        for (Map<String, Object> panel : d.panels()) {
            Map<String, Object> ds = (Map<String, Object>) panel.get("datasource");
            assertEquals("${DS_PROMETHEUS}", ds.get("uid"), "panel " + panel.get("title"));
            List<Object> targets = (List<Object>) panel.get("targets");
            assertFalse(targets.isEmpty(), "panel " + panel.get("title") + " has no query");
            for (Object t : targets) {
                assertEquals(
                        "${DS_PROMETHEUS}",
                        ((Map<String, Object>) ((Map<String, Object>) t).get("datasource")).get("uid"),
                        "a query of " + panel.get("title"));
            }
        }
    }

    /**
     * Every panel docs/monitoring.md lists, and only those, in the same order as its table of panels
     * ({@code | panel | series | what to look for |}).
     */
    @Test
    void theDashboardHasThePanelsAnOperatorNeeds() throws Exception {
        List<String> titles = new ArrayList<>();
        KpipeDashboard.load().panels().forEach(p -> titles.add((String) p.get("title")));
        assertEquals(
                List.of(
                        "Pipelined connections",
                        "Requests in flight per connection",
                        "Held responses and requests",
                        "Pipelined request rate",
                        "Byte budget in use vs limit",
                        "Byte budget waits",
                        "Upgrades, drains and downgrades",
                        "Average drain time",
                        "Throttling",
                        "Plugin faults"),
                titles);

        List<String> documented = new ArrayList<>();
        List<String> lines = Files.readAllLines(Path.of(System.getProperty("kpipe.it.docs.dir"), "monitoring.md"));
        int header = lines.indexOf("| panel | series | what to look for |");
        assertTrue(header >= 0, "docs/monitoring.md has the table of panels");
        for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("| "); i++) {
            documented.add(lines.get(i).substring(2, lines.get(i).indexOf(" |", 2)));
        }
        assertEquals(titles, documented, "the panels docs/monitoring.md lists");
    }

    @Test
    void everyQueryNamesOnlyDocumentedSeries() {
        KpipeDashboard d = KpipeDashboard.load();
        Set<String> names = d.metricNames();
        assertFalse(names.isEmpty());
        Set<String> documented = PrometheusSeries.all().keySet();
        for (String n : names) {
            assertTrue(documented.contains(n), n + " is not a documented kpipe series");
        }
        for (String e : d.exprs()) {
            assertFalse(KpipeDashboard.metricNames(e).isEmpty(), "no metric in " + e);
        }
    }

    @Test
    void metricNamesOfPromQl() {
        assertEquals(
                Set.of("a_total"),
                KpipeDashboard.metricNames("rate(a_total{instance=~\"$instance\"}[$__rate_interval])"));
        assertEquals(Set.of("a", "b"), KpipeDashboard.metricNames("sum by (instance) (a) / on (x) b * 1e3 + 0.5"));
    }

    /** docs/monitoring.md's table of series: {@code | `name` | counter/gauge | meaning |}. */
    @Test
    void theDocumentedTableIsExactlyTheExportedSeries() throws Exception {
        String doc = Files.readString(Path.of(System.getProperty("kpipe.it.docs.dir"), "monitoring.md"));
        Matcher m = Pattern.compile("(?m)^\\| `(kafka_server_kpipe_metrics_[a-z_]+)` \\| (counter|gauge) \\|")
                .matcher(doc);
        Map<String, String> table = new TreeMap<>();
        while (m.find()) {
            table.put(m.group(1), m.group(2));
        }
        Map<String, String> expected = new TreeMap<>();
        PrometheusSeries.all().forEach((name, metric) -> expected.put(name, PrometheusSeries.type(metric)));
        assertEquals(expected, table);
    }
}
