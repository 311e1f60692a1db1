// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code --client} summary from fixed rounds: medians, per-pair ratios and the in-flight maximum. No brokers. */
class ClientsTableTest {
    private static RoundResult round(Variant v, int round, double recordsPerSec, double inflightMax) {
        Map<String, Object> extra = new LinkedHashMap<>();
        if (v == Variant.KPIPE) {
            extra.put("kpipe_inflight_requests_per_connection_max", inflightMax);
        }
        return new RoundResult(
                "S1",
                v,
                round,
                10,
                (long) (recordsPerSec * 10),
                recordsPerSec,
                recordsPerSec / 15,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                0,
                null,
                extra);
    }

    @Test
    void eachClientGetsItsRatioAndInFlightMaximum() {
        BenchOptions o = BenchOptions.parse(new String[] {"--client", "kcat-idempotent,kafkajs"});
        Report kcat = new Report(Scenarios.s1(100, o, BenchClient.KCAT_IDEMPOTENT));
        kcat.add(round(Variant.STOCK, 1, 100, 0));
        kcat.add(round(Variant.KPIPE, 1, 110, 1));
        kcat.add(round(Variant.STOCK, 2, 100, 0));
        kcat.add(round(Variant.KPIPE, 2, 90, 1));
        Report js = new Report(Scenarios.s1(100, o, BenchClient.KAFKAJS));
        js.add(round(Variant.STOCK, 1, 100, 0));
        js.add(round(Variant.KPIPE, 1, 480, 4));
        Report plain = new Report(Scenarios.s1(100, o));

        List<Map<String, Object>> rows = ClientsTable.rows(ClientsTable.clientReports(List.of(kcat, plain, js)));
        assertEquals(2, rows.size(), "S1 without --client is not a client row");
        assertEquals("kcat-idempotent", rows.get(0).get("client"));
        assertEquals(1.0, (Double) rows.get(0).get("kpipe_stock_ratio"), 1e-9, "pairs 1.1 and 0.9");
        assertEquals(0.9, (Double) rows.get(0).get("kpipe_stock_ratio_min"), 1e-9);
        assertEquals(1.0, (Double) rows.get(0).get("kpipe_inflight_requests_per_connection_max"));
        assertEquals(4.8, (Double) rows.get(1).get("kpipe_stock_ratio"), 1e-9);
        assertEquals(4.0, (Double) rows.get(1).get("kpipe_inflight_requests_per_connection_max"));
        String table = ClientsTable.of(List.of(kcat, plain, js));
        assertTrue(table.contains("kcat (librdkafka), enable.idempotence=true, max.in.flight=5"), table);
        assertTrue(table.contains("4.80x [4.80..4.80]"), table);
        assertEquals(List.of(), kcat.targets(), "no S1 targets for a --client run");
    }
}
