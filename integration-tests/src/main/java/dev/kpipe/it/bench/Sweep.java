// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The S1 sweep ({@code --scenario sweep}): S1 at several ack windows W, stock vs kpipe, summed up as one table, a JSON
 * section and a PNG chart ({@link SweepChart}) next to the run's JSON. The ceilings are scaled with the records per
 * produce request measured over the whole sweep (the median of every W's median; the producer fills its 16 KiB
 * batches whenever requests, not records, are the limit, so this hardly varies with W). Immutable.
 */
final class Sweep {
    /** The windows W of the sweep, ms, unless {@code --window-ms} names others. */
    static final List<Integer> DEFAULT_WINDOWS_MS = List.of(10, 25, 50, 100, 250, 500);

    private final List<SweepPoint> points;
    private final double recordsPerRequest;

    private Sweep(List<SweepPoint> points) {
        this.points = points;
        this.recordsPerRequest = Report.Stat.of(
                        points.stream().map(SweepPoint::recordsPerRequest).toList())
                .median();
    }

    /**
     * @param reports the run's reports; the S1 ones with rounds on both sides make the sweep
     * @return the sweep, its points ordered by W
     */
    static Sweep of(List<Report> reports) {
        List<SweepPoint> l = new ArrayList<>();
        for (Report r : reports) {
            if (r.scenario().id.equals("S1") && r.hasPairs()) {
                l.add(SweepPoint.of(r));
            }
        }
        l.sort(Comparator.comparingInt(SweepPoint::windowMs));
        return new Sweep(List.copyOf(l));
    }

    /** @return the points, by W */
    List<SweepPoint> points() {
        return points;
    }

    /** @return the records per produce request the ceilings are scaled with */
    double recordsPerRequest() {
        return recordsPerRequest;
    }

    /**
     * @param jsonFile the run's JSON, e.g. {@code bench-20261201-093000.json}
     * @return the chart's path beside it, e.g. {@code bench-20261201-093000-s1-sweep.png}
     */
    static Path chartPath(Path jsonFile) {
        String name = jsonFile.getFileName().toString().replaceFirst("\\.json$", "");
        return jsonFile.resolveSibling(name + "-s1-sweep.png");
    }

    /**
     * Draws the chart.
     *
     * @param png where to write it
     * @param kafkaVersion the broker's version, for the subtitle
     * @param o the options (rounds, duration), for the subtitle
     * @throws IOException if the file cannot be written
     */
    void writeChart(Path png, String kafkaVersion, BenchOptions o) throws IOException {
        int inFlight = points.isEmpty() ? 0 : points.get(0).maxInFlight();
        SweepChart.write(
                points,
                recordsPerRequest,
                subtitle(
                        kafkaVersion,
                        inFlight,
                        o.s1RecordBytes(),
                        o.batchBytes(),
                        o.rounds(),
                        o.durationSeconds(),
                        recordsPerRequest),
                png);
    }

    /**
     * @param kafkaVersion the broker's version
     * @param inFlight the producer's {@code max.in.flight.requests.per.connection} in the sweep's rounds
     * @param recordBytes the record value size, bytes ({@code --s1-record-bytes})
     * @param batchBytes the producer's {@code batch.size}, bytes
     * @param rounds rounds per side
     * @param durationSeconds measured seconds per round
     * @param recordsPerRequest records per request the ceilings are scaled with
     * @return the chart's subtitle: how the numbers were taken, from the run's own options and results
     */
    static String subtitle(
            String kafkaVersion,
            int inFlight,
            int recordBytes,
            int batchBytes,
            int rounds,
            int durationSeconds,
            double recordsPerRequest) {
        return String.format(
                Locale.ROOT,
                "Kafka %s, 2-node KRaft on loopback, the follower acknowledges every W ms;"
                        + " idempotent producer, %d in flight, %s records, %d B batches; %d round(s) x %d s per side, medians."
                        + " Ceilings (dashed) = requests/s x %.1f records per request (the median measured over the sweep).",
                kafkaVersion,
                inFlight,
                size(recordBytes),
                batchBytes,
                rounds,
                durationSeconds,
                recordsPerRequest);
    }

    /** @return {@code 1 KiB} for 1024, {@code 100 B} for 100 */
    private static String size(int bytes) {
        return bytes > 0 && bytes % 1024 == 0 ? bytes / 1024 + " KiB" : bytes + " B";
    }

    /** @return the sweep as a JSON-ready map */
    Map<String, Object> toMap(Path png) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("records_per_request_for_ceilings", recordsPerRequest);
        m.put("records_per_request_basis", "median over W of each W's median records per produce request (both sides)");
        m.put("chart", png == null ? null : png.toString());
        List<Object> l = new ArrayList<>();
        for (SweepPoint p : points) {
            l.add(p.toMap(recordsPerRequest));
        }
        m.put("points", l);
        return m;
    }

    /** @return the sweep's table, several lines */
    String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "S1 sweep (ceilings at %.1f records per request, the median measured):%n",
                recordsPerRequest));
        sb.append(String.format(
                Locale.ROOT,
                "  %-8s %-12s %-12s %-20s %-16s %-16s %s%n",
                "W ms",
                "stock rec/s",
                "kpipe rec/s",
                "kpipe/stock",
                "stock ceiling",
                "kpipe ceiling",
                "kpipe of its ceiling"));
        for (SweepPoint p : points) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  %-8d %-12.1f %-12.1f %-20s %-16.1f %-16.1f %s%n",
                    p.windowMs(),
                    p.stockRecordsPerSec().median(),
                    p.kpipeRecordsPerSec().median(),
                    String.format(
                            Locale.ROOT,
                            "%.2fx [%.2f..%.2f]",
                            p.ratio().median(),
                            p.ratio().min(),
                            p.ratio().max()),
                    p.stockCeiling(recordsPerRequest),
                    p.kpipeCeiling(recordsPerRequest),
                    Report.pct(p.kpipeRecordsPerSec().median() / p.kpipeCeiling(recordsPerRequest))));
        }
        return sb.toString();
    }
}
