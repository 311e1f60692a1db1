// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.Report.extra;

import dev.kpipe.it.bench.Report.Stat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The summary of an S1 run with {@code --client}: per client, its in-flight setting, stock's and kpipe's records/s,
 * kpipe/stock, and the most requests kpipe saw in flight on the client's connection ({@code
 * inflight-requests-per-connection-max}): what each client gains and whether it pipelines at all. Stateless.
 */
final class ClientsTable {
    private ClientsTable() {}

    /** @return the reports of {@code --client} scenarios, in run order */
    static List<Report> clientReports(List<Report> reports) {
        return reports.stream().filter(r -> r.scenario().client != null).toList();
    }

    /**
     * @param reports the run's reports ({@link #clientReports})
     * @return the table, several lines; empty if no report has a client
     */
    static String of(List<Report> reports) {
        List<Report> clients = clientReports(reports);
        if (clients.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder(
                "which clients gain (S1: acks=all, one partition, the follower acking every"
                        + " W ms; medians over rounds; in-flight max = kpipe's inflight-requests-per-connection-max):\n");
        String f = "  %-8s %-20s %-12s %-12s %-24s %-14s %s%n";
        sb.append(String.format(
                Locale.ROOT,
                f,
                "W",
                "client",
                "stock rec/s",
                "kpipe rec/s",
                "kpipe/stock",
                "in-flight max",
                "settings"));
        for (Map<String, Object> row : rows(clients)) {
            sb.append(String.format(
                    Locale.ROOT,
                    f,
                    row.get("window_ms") + " ms",
                    row.get("client"),
                    Report.fmt((Double) row.get("stock_records_per_s")),
                    Report.fmt((Double) row.get("kpipe_records_per_s")),
                    String.format(
                            Locale.ROOT,
                            "%.2fx [%.2f..%.2f]",
                            (Double) row.get("kpipe_stock_ratio"),
                            (Double) row.get("kpipe_stock_ratio_min"),
                            (Double) row.get("kpipe_stock_ratio_max")),
                    String.format(Locale.ROOT, "%.0f", (Double) row.get("kpipe_inflight_requests_per_connection_max")),
                    row.get("settings")));
        }
        return sb.toString();
    }

    /** @return one JSON-ready map per client report */
    static List<Map<String, Object>> rows(List<Report> clients) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Report r : clients) {
            Scenario s = r.scenario();
            Stat ratio = r.ratio(RoundResult::recordsPerSec);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("window_ms", s.windowMs);
            m.put("client", s.client.id);
            m.put("settings", s.client.describe());
            m.put(
                    "stock_records_per_s",
                    r.stat(Variant.STOCK, RoundResult::recordsPerSec).median());
            m.put(
                    "kpipe_records_per_s",
                    r.stat(Variant.KPIPE, RoundResult::recordsPerSec).median());
            m.put("kpipe_stock_ratio", ratio.median());
            m.put("kpipe_stock_ratio_min", ratio.min());
            m.put("kpipe_stock_ratio_max", ratio.max());
            m.put(
                    "kpipe_inflight_requests_per_connection_max",
                    r.stat(Variant.KPIPE, x -> extra(x, "kpipe_inflight_requests_per_connection_max"))
                            .max());
            rows.add(m);
        }
        return rows;
    }
}
