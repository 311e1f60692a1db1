// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Summarises a scenario's rounds: per side the median [min..max] over rounds, the kpipe/stock ratios (computed per
 * round pair, then median [min..max]), S1's ceiling, and the targets; the JSON summary (the table: {@link ReportTable}).
 * Immutable once built; not thread-safe while being built.
 */
final class Report {
    /** S1 target: kpipe/stock records/s at least this. */
    static final double S1_MIN_RATIO = 4.0;
    /** S1 target: kpipe requests/s at least this fraction of {@code max.in.flight / W}. */
    static final double S1_MIN_CEILING_FRACTION = 0.80;
    /** S1L (1 MiB batches) target: kpipe/stock records/s at least this. */
    static final double S1L_MIN_RATIO = 4.5;
    /** S2F (fixed offered load) target: kpipe/stock broker CPU per record at most this (median of round pairs). */
    static final double S2F_MAX_CPU_RATIO = 1.03;
    /** S2 target: kpipe/stock records/s at least this. */
    static final double S2_MIN_THROUGHPUT_RATIO = 0.97;
    /** S2 target: kpipe/stock p99 latency at most this. */
    static final double S2_MAX_P99_RATIO = 1.05;

    /**
     * S8 target (issue 33, at W = 1 and 2 ms with 16 producers): kpipe/stock broker CPU per produce request at most
     * this (median of round pairs).
     */
    static final double S8_MAX_CPU_PER_REQUEST_RATIO = 1.05;
    /** S8 target (issue 33): kpipe/stock p99 latency at most this: never above stock's. */
    static final double S8_MAX_P99_RATIO = 1.00;

    /** S5 target: kpipe/stock records/s at least this (the commit's round trip lowers the ceiling below S1's). */
    static final double S5_MIN_RATIO = 3.5;

    /** S3 target: the slowest producer's records at least this fraction of the median producer's. */
    static final double S3_MIN_SLOWEST_SHARE = 1.0 / 3;

    /** Other processes using more CPU than this (cores) during a window mark the run as disturbed. */
    static final double DISTURBED_CORES = 0.25;

    /** Median, minimum, maximum. */
    record Stat(double median, double min, double max) {
        static Stat of(List<Double> values) {
            List<Double> v =
                    values.stream().filter(d -> !Double.isNaN(d)).sorted().toList();
            if (v.isEmpty()) {
                return new Stat(Double.NaN, Double.NaN, Double.NaN);
            }
            int n = v.size();
            double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
            return new Stat(median, v.get(0), v.get(n - 1));
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("median", median);
            m.put("min", min);
            m.put("max", max);
            return m;
        }
    }

    private final Scenario scenario;
    private final List<RoundResult> stock = new ArrayList<>();
    private final List<RoundResult> kpipe = new ArrayList<>();
    /** The A/A control's rounds: a second stock cluster in the same alternation ({@link RoundOrder}). */
    private final List<RoundResult> control = new ArrayList<>();

    Report(Scenario scenario) {
        this.scenario = scenario;
    }

    void add(RoundResult r) {
        (r.variant() == Variant.STOCK ? stock : kpipe).add(r);
    }

    /** @param r a round of the A/A control (a second stock cluster) */
    void addControl(RoundResult r) {
        control.add(r);
    }

    /** @return whether the A/A control has rounds */
    boolean hasControl() {
        return !control.isEmpty() && !stock.isEmpty();
    }

    /** @return the A/A control's median [min..max] of {@code f} over its rounds */
    Stat controlStat(ToDoubleFunction<RoundResult> f) {
        return Stat.of(control.stream().map(f::applyAsDouble).toList());
    }

    /** A/A: stock-b/stock per round pair (round i of each), then median/min/max: the noise of the measurement. */
    Stat controlRatio(ToDoubleFunction<RoundResult> f) {
        return Stat.of(pairRatios(control, stock, f));
    }

    /** @return {@code f(a_i) / f(b_i)} for each round i both have */
    static List<Double> pairRatios(List<RoundResult> a, List<RoundResult> b, ToDoubleFunction<RoundResult> f) {
        List<Double> l = new ArrayList<>();
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            l.add(f.applyAsDouble(a.get(i)) / f.applyAsDouble(b.get(i)));
        }
        return l;
    }

    Scenario scenario() {
        return scenario;
    }

    /** @return whether both sides have at least one round */
    boolean hasPairs() {
        return !stock.isEmpty() && !kpipe.isEmpty();
    }

    Stat stat(Variant v, ToDoubleFunction<RoundResult> f) {
        List<Double> l = new ArrayList<>();
        for (RoundResult r : v == Variant.STOCK ? stock : kpipe) {
            l.add(f.applyAsDouble(r));
        }
        return Stat.of(l);
    }

    /** kpipe/stock per round pair (round i of each side), then median/min/max. */
    Stat ratio(ToDoubleFunction<RoundResult> f) {
        return Stat.of(pairRatios(kpipe, stock, f));
    }

    /** @return the rounds of one side, in order */
    List<RoundResult> rounds(Variant v) {
        return v == Variant.STOCK ? stock : kpipe;
    }

    Stat ceilingFraction(Variant v) {
        double ceiling = scenario.ceilingRequestsPerSec();
        return stat(v, r -> r.produceRequestsPerSec() / ceiling);
    }

    /** Broker JVMs' CPU time per record of the window, in microseconds (all nodes of the cluster under test). */
    static double cpuPerRecord(RoundResult r) {
        return r.extra().get("broker_cpu_us_per_record") instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /**
     * Broker JVMs' CPU time over the window (all nodes of the cluster under test) per produce request the leader
     * received in it, in microseconds.
     */
    static double cpuPerRequest(RoundResult r) {
        return r.extra().get("broker_cpu_us_per_produce_request") instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** The leader's JVM's CPU time over the window (node 1 alone) per produce request it received, microseconds. */
    static double leaderCpuPerRequest(RoundResult r) {
        return r.extra().get("leader_cpu_us_per_produce_request") instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** The leader's network processor rounds (selector polls) per produce request it received. */
    static double selectsPerRequest(RoundResult r) {
        return r.extra().get("broker_selects_per_produce_request") instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** Records per produce request (the leader's responses). */
    static double recPerReq(RoundResult r) {
        return r.recordsPerSec() / r.produceRequestsPerSec();
    }

    /** Produce requests per 1,000 records: what batching did, to tell it apart from the CPU cost per request. */
    static double requestsPerThousandRecords(RoundResult r) {
        return 1000 * r.produceRequestsPerSec() / r.recordsPerSec();
    }

    /** @return the targets of this scenario with measured value and verdict */
    List<Map<String, Object>> targets() {
        List<Map<String, Object>> l = new ArrayList<>();
        if (!hasPairs() || scenario.client != null) { // --client runs show what each client gets: no S1 targets
            return l;
        }
        if (scenario.isS9() || scenario.isS10() || scenario.isS11()) {
            return RawLines.targets(this);
        }
        if (scenario.isS3()) {
            double bound = maxExtra(Variant.KPIPE, "kpipe_inflight_bytes_max")
                    / (scenario.budgetBytes() + maxExtra(Variant.KPIPE, "broker_produce_request_bytes_max"));
            l.add(target("kpipe peak in-flight bytes <= budget + largest produce request", bound, bound <= 1, "x"));
            double errors = 0;
            for (Variant v : Variant.values()) {
                for (RoundResult r : v == Variant.STOCK ? stock : kpipe) {
                    errors += r.errors();
                }
            }
            l.add(target("producer errors = 0 (both sides)", errors, errors == 0, "count"));
            double share = stat(Variant.KPIPE, r -> extra(r, "slowest_producer_share_of_median"))
                    .min();
            l.add(target(
                    "kpipe slowest producer >= 1/3 of the median producer (worst round)",
                    share,
                    share >= S3_MIN_SLOWEST_SHARE,
                    "x"));
            return l;
        }
        if (scenario.isS8()) {
            double offered = scenario.offeredRecordsPerSec;
            Stat t = stat(Variant.KPIPE, x -> x.recordsPerSec() / offered);
            l.add(target(
                    "kpipe records/s >= " + S2_MIN_THROUGHPUT_RATIO + " x offered (the offered load delivered)",
                    t.median(),
                    t.median() >= S2_MIN_THROUGHPUT_RATIO,
                    "x"));
            Stat c = ratio(Report::cpuPerRequest);
            l.add(target(
                    "broker CPU/produce request kpipe/stock <= " + S8_MAX_CPU_PER_REQUEST_RATIO,
                    c.median(),
                    c.median() <= S8_MAX_CPU_PER_REQUEST_RATIO,
                    "x"));
            Stat p = ratio(RoundResult::p99Ms);
            l.add(target("p99 kpipe/stock <= " + S8_MAX_P99_RATIO, p.median(), p.median() <= S8_MAX_P99_RATIO, "x"));
            return l;
        }
        if (scenario.isS5()) {
            Stat r = ratio(RoundResult::recordsPerSec);
            l.add(target(
                    "records/s kpipe/stock >= " + S5_MIN_RATIO + "x", r.median(), r.median() >= S5_MIN_RATIO, "x"));
            return l;
        }
        if (scenario.windowMs > 0) {
            double min = scenario.minRatio();
            l.add(target(
                    "records/s kpipe/stock >= " + min + "x",
                    ratio(RoundResult::recordsPerSec).median(),
                    ratio(RoundResult::recordsPerSec).median() >= min,
                    "x"));
            Stat f = ceilingFraction(Variant.KPIPE);
            l.add(target(
                    "kpipe produce req/s >= " + pct(S1_MIN_CEILING_FRACTION) + " of ceiling "
                            + fmt(scenario.ceilingRequestsPerSec()) + "/s",
                    f.median(),
                    f.median() >= S1_MIN_CEILING_FRACTION,
                    "%"));
        } else {
            Stat t = ratio(RoundResult::recordsPerSec);
            l.add(target(
                    "records/s kpipe/stock >= " + S2_MIN_THROUGHPUT_RATIO,
                    t.median(),
                    t.median() >= S2_MIN_THROUGHPUT_RATIO,
                    "x"));
            Stat p = ratio(RoundResult::p99Ms);
            l.add(target("p99 kpipe/stock <= " + S2_MAX_P99_RATIO, p.median(), p.median() <= S2_MAX_P99_RATIO, "x"));
            if (scenario.isFixedLoad()) {
                Stat c = ratio(Report::cpuPerRecord);
                l.add(target(
                        "broker CPU/record kpipe/stock <= " + S2F_MAX_CPU_RATIO,
                        c.median(),
                        c.median() <= S2F_MAX_CPU_RATIO,
                        "x"));
            }
        }
        return l;
    }

    static Map<String, Object> target(String what, double value, boolean met, String unit) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("target", what);
        m.put("measured_median", value);
        m.put("unit", unit);
        m.put("met", met);
        return m;
    }

    /** @return the table, several lines ({@link ReportTable}) */
    String table(BenchOptions o) {
        return ReportTable.of(this, o);
    }

    static double extra(RoundResult r, String key) {
        return r.extra().get(key) instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** @return the largest value of an extra figure over the rounds of one side, NaN if none */
    double maxExtra(Variant v, String key) {
        return stat(v, r -> extra(r, key)).max();
    }

    /** @return the JSON summary of this scenario */
    Map<String, Object> toMap(BenchOptions o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario.describe());
        List<Object> rounds = new ArrayList<>();
        for (int i = 0; i < Math.max(stock.size(), kpipe.size()); i++) {
            if (i < stock.size()) {
                rounds.add(stock.get(i).toMap());
            }
            if (i < kpipe.size()) {
                rounds.add(kpipe.get(i).toMap());
            }
            if (i < control.size()) {
                Map<String, Object> c = control.get(i).toMap();
                c.put("variant", RoundOrder.CONTROL_LABEL);
                rounds.add(c);
            }
        }
        m.put("rounds", rounds);
        Map<String, Object> summary = new LinkedHashMap<>();
        for (Variant v : Variant.values()) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("records_per_s", stat(v, RoundResult::recordsPerSec).toMap());
            s.put(
                    "produce_requests_per_s",
                    stat(v, RoundResult::produceRequestsPerSec).toMap());
            s.put("records_per_request", stat(v, Report::recPerReq).toMap());
            s.put("latency_p50_ms", stat(v, RoundResult::p50Ms).toMap());
            s.put("latency_p99_ms", stat(v, RoundResult::p99Ms).toMap());
            s.put("latency_p999_ms", stat(v, RoundResult::p999Ms).toMap());
            s.put("broker_cpu_us_per_record", stat(v, Report::cpuPerRecord).toMap());
            s.put(
                    "broker_cpu_us_per_produce_request",
                    stat(v, Report::cpuPerRequest).toMap());
            s.put(
                    "broker_selects_per_produce_request",
                    stat(v, Report::selectsPerRequest).toMap());
            if (scenario.hasCeiling()) {
                s.put("ceiling_fraction", ceilingFraction(v).toMap());
            }
            summary.put(v.label(), s);
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("records_per_s", ratio(RoundResult::recordsPerSec).toMap());
        r.put(
                "produce_requests_per_s",
                ratio(RoundResult::produceRequestsPerSec).toMap());
        r.put("latency_p50_ms", ratio(RoundResult::p50Ms).toMap());
        r.put("latency_p99_ms", ratio(RoundResult::p99Ms).toMap());
        r.put("latency_p999_ms", ratio(RoundResult::p999Ms).toMap());
        r.put("broker_cpu_us_per_record", ratio(Report::cpuPerRecord).toMap());
        r.put("broker_cpu_us_per_produce_request", ratio(Report::cpuPerRequest).toMap());
        r.put(
                "broker_selects_per_produce_request",
                ratio(Report::selectsPerRequest).toMap());
        r.put(
                "produce_requests_per_record",
                ratio(Report::requestsPerThousandRecords).toMap());
        summary.put("kpipe_over_stock", r);
        if (hasControl()) {
            Map<String, Object> aa = new LinkedHashMap<>();
            aa.put("records_per_s", controlRatio(RoundResult::recordsPerSec).toMap());
            aa.put(
                    "broker_cpu_us_per_record",
                    controlRatio(Report::cpuPerRecord).toMap());
            aa.put(
                    "produce_requests_per_record",
                    controlRatio(Report::requestsPerThousandRecords).toMap());
            aa.put(
                    "broker_cpu_us_per_produce_request",
                    controlRatio(Report::cpuPerRequest).toMap());
            aa.put(
                    "leader_cpu_us_per_produce_request",
                    controlRatio(Report::leaderCpuPerRequest).toMap());
            aa.put(
                    "broker_selects_per_produce_request",
                    controlRatio(Report::selectsPerRequest).toMap());
            aa.put("latency_p50_ms", controlRatio(RoundResult::p50Ms).toMap());
            aa.put("latency_p99_ms", controlRatio(RoundResult::p99Ms).toMap());
            aa.put("latency_p999_ms", controlRatio(RoundResult::p999Ms).toMap());
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("records_per_s", controlStat(RoundResult::recordsPerSec).toMap());
            b.put("latency_p50_ms", controlStat(RoundResult::p50Ms).toMap());
            b.put("latency_p99_ms", controlStat(RoundResult::p99Ms).toMap());
            b.put("latency_p999_ms", controlStat(RoundResult::p999Ms).toMap());
            b.put("broker_cpu_us_per_record", controlStat(Report::cpuPerRecord).toMap());
            b.put(
                    "broker_cpu_us_per_produce_request",
                    controlStat(Report::cpuPerRequest).toMap());
            summary.put(RoundOrder.CONTROL_LABEL, b);
            summary.put("aa_stock_b_over_stock", aa);
        }
        if (scenario.isS5() && hasPairs()) {
            summary.put(
                    "s5_ratio_ceiling",
                    scenario.s5RatioCeiling(
                            stat(Variant.STOCK, Report::recPerReq).median()));
        }
        m.put("summary", summary);
        m.put("targets", targets());
        return m;
    }

    static String stat(Stat s, int decimals) {
        String f = "%,." + decimals + "f";
        return String.format(Locale.ROOT, f + " [" + f + ".." + f + "]", s.median(), s.min(), s.max());
    }

    static String ratio(Stat s) {
        return String.format(Locale.ROOT, "%.2fx [%.2f..%.2f]", s.median(), s.min(), s.max());
    }

    static String pct(double f) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * f);
    }

    static String fmt(double d) {
        return d == Math.rint(d) ? String.format(Locale.ROOT, "%.0f", d) : String.format(Locale.ROOT, "%.1f", d);
    }
}
