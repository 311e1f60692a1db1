// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One W of the S1 sweep: what stock Kafka and kpipe moved at that ack window, medians over the rounds. Immutable.
 *
 * @param windowMs W, the follower's {@code replica.fetch.wait.max.ms}, ms
 * @param maxInFlight the producer's {@code max.in.flight.requests.per.connection}
 * @param stockRecordsPerSec stock Kafka's records/s, median [min..max] over the rounds
 * @param kpipeRecordsPerSec kpipe's records/s, median [min..max] over the rounds
 * @param ratio kpipe/stock records/s per round pair, median [min..max]
 * @param recordsPerRequest records per produce request measured at this W (both sides' rounds), median
 */
record SweepPoint(
        int windowMs,
        int maxInFlight,
        Report.Stat stockRecordsPerSec,
        Report.Stat kpipeRecordsPerSec,
        Report.Stat ratio,
        double recordsPerRequest) {

    /**
     * @param r the report of one S1 scenario with at least one round per side
     * @return that scenario's point
     */
    static SweepPoint of(Report r) {
        Scenario s = r.scenario();
        java.util.List<Double> rpr = new java.util.ArrayList<>();
        for (Variant v : Variant.values()) {
            Report.Stat st = r.stat(v, x -> x.recordsPerSec() / x.produceRequestsPerSec());
            rpr.add(st.median());
        }
        return new SweepPoint(
                s.windowMs,
                s.maxInFlight,
                r.stat(Variant.STOCK, RoundResult::recordsPerSec),
                r.stat(Variant.KPIPE, RoundResult::recordsPerSec),
                r.ratio(RoundResult::recordsPerSec),
                Report.Stat.of(rpr).median());
    }

    /**
     * @param recordsPerRequest records per produce request to scale the ceiling with
     * @return stock Kafka's ceiling at this W: one request per connection per W, {@code 1000 / W x recordsPerRequest}
     *     records/s
     */
    double stockCeiling(double recordsPerRequest) {
        return 1000.0 / windowMs * recordsPerRequest;
    }

    /**
     * @param recordsPerRequest records per produce request to scale the ceiling with
     * @return kpipe's ceiling at this W: {@code maxInFlight} requests per W, records/s
     */
    double kpipeCeiling(double recordsPerRequest) {
        return maxInFlight * stockCeiling(recordsPerRequest);
    }

    /**
     * @param recordsPerRequest the records per request the chart's ceilings use
     * @return this point as JSON-ready map
     */
    Map<String, Object> toMap(double recordsPerRequest) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("window_ms", windowMs);
        m.put("stock_records_per_s", stockRecordsPerSec.toMap());
        m.put("kpipe_records_per_s", kpipeRecordsPerSec.toMap());
        m.put("kpipe_over_stock_records_per_s", ratio.toMap());
        m.put("records_per_request_measured", recordsPerRequest());
        m.put("stock_ceiling_records_per_s", stockCeiling(recordsPerRequest));
        m.put("kpipe_ceiling_records_per_s", kpipeCeiling(recordsPerRequest));
        m.put("kpipe_fraction_of_ceiling", kpipeRecordsPerSec.median() / kpipeCeiling(recordsPerRequest));
        return m;
    }
}
