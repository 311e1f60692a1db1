// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.Report.ratio;
import static dev.kpipe.it.bench.Report.stat;

import dev.kpipe.it.bench.Report.Stat;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The cost lines of a {@link Report}'s table (S2, S2F, S8, any scenario with an A/A control): per side (stock, kpipe,
 * and the A/A control stock-b if it ran) broker CPU per record and per produce request, produce requests per 1000
 * records, processor rounds per request and the latency percentiles; then kpipe/stock and stock-b/stock per round
 * pair. Stateless.
 */
final class CostLines {
    private CostLines() {}

    /**
     * Broker CPU per record and per produce request, produce requests per record, side by side, kpipe/stock and the A/A
     * stock-b/stock: a kpipe/stock CPU ratio outside the A/A range is a cost; a requests/record ratio away from 1 says
     * the batches changed (which changes the CPU per record by itself, not the CPU per request).
     */
    static String of(Report r) {
        Scenario scenario = r.scenario();
        StringBuilder sb = new StringBuilder();
        sb.append(perSide(r, "broker CPU us/record", Report::cpuPerRecord, 2));
        sb.append(perSide(r, "broker CPU us/produce request", Report::cpuPerRequest, 1));
        boolean follower = scenario.nodes > 1; // else the leader's CPU is the broker CPU
        if (follower) {
            sb.append(perSide(r, "leader CPU us/produce request (node 1 alone)", Report::leaderCpuPerRequest, 1));
        }
        sb.append(perSide(r, "produce requests per 1000 records", Report::requestsPerThousandRecords, 2));
        sb.append(perSide(r, "processor rounds (selector polls) per produce request", Report::selectsPerRequest, 2));
        sb.append(perSide(r, "network-thread wake-ups per produce request", CostLines::networkWakeups, 2));
        sb.append(perSide(r, "handler-thread wake-ups per produce request", CostLines::handlerWakeups, 2));
        sb.append(perSide(r, "network-thread CPU us/produce request", CostLines::networkCpu, 1));
        sb.append(perSide(r, "handler-thread CPU us/produce request", CostLines::handlerCpu, 1));
        sb.append(perSide(r, "G1 threads' CPU us/produce request", CostLines::gcCpu, 1));
        sb.append(String.format(
                Locale.ROOT,
                "  kpipe's own wake-ups (processor-wakeup-total) per produce request: %s%n",
                stat(r.stat(Variant.KPIPE, CostLines::kpipeWakeups), 3)));
        sb.append(perSide(r, "latency p50 ms", RoundResult::p50Ms, 1));
        sb.append(perSide(r, "latency p99 ms", RoundResult::p99Ms, 1));
        sb.append(perSide(r, "latency p999 ms", RoundResult::p999Ms, 1));
        if (r.hasPairs()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  kpipe/stock   CPU/record %s   CPU/request %s   requests/record %s   rounds/request %s"
                            + "   records/s %s%n",
                    ratio(r.ratio(Report::cpuPerRecord)),
                    ratio(r.ratio(Report::cpuPerRequest)),
                    ratio(r.ratio(Report::requestsPerThousandRecords)),
                    ratio(r.ratio(Report::selectsPerRequest)),
                    ratio(r.ratio(RoundResult::recordsPerSec))));
            if (follower) {
                sb.append(String.format(
                        Locale.ROOT,
                        "  kpipe/stock   leader CPU/request %s%n",
                        ratio(r.ratio(Report::leaderCpuPerRequest))));
            }
            sb.append(threadRatios("kpipe/stock  ", r::ratio));
            sb.append(latencyRatios("kpipe/stock  ", r::ratio));
        }
        if (r.hasControl()) {
            String aa = "A/A " + RoundOrder.CONTROL_LABEL + "/stock";
            sb.append(String.format(
                    Locale.ROOT,
                    "  %s CPU/record %s   CPU/request %s   requests/record %s   rounds/request %s   records/s %s"
                            + "  (the noise)%n",
                    aa,
                    ratio(r.controlRatio(Report::cpuPerRecord)),
                    ratio(r.controlRatio(Report::cpuPerRequest)),
                    ratio(r.controlRatio(Report::requestsPerThousandRecords)),
                    ratio(r.controlRatio(Report::selectsPerRequest)),
                    ratio(r.controlRatio(RoundResult::recordsPerSec))));
            if (follower) {
                sb.append(String.format(
                        Locale.ROOT,
                        "  %s leader CPU/request %s%n",
                        aa,
                        ratio(r.controlRatio(Report::leaderCpuPerRequest))));
            }
            sb.append(threadRatios(aa, r::controlRatio));
            sb.append(latencyRatios(aa, r::controlRatio));
        }
        if (scenario.isFixedLoad()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  offered %,d records/s; acknowledged in the window: stock %s, kpipe %s%s%n",
                    scenario.offeredRecordsPerSec + scenario.excludedRecordsPerSec,
                    stat(r.stat(Variant.STOCK, RoundResult::recordsPerSec), 0),
                    stat(r.stat(Variant.KPIPE, RoundResult::recordsPerSec), 0),
                    r.hasControl()
                            ? ", " + RoundOrder.CONTROL_LABEL + " " + stat(r.controlStat(RoundResult::recordsPerSec), 0)
                            : ""));
        }
        return sb.toString();
    }

    /** One figure per side: stock, kpipe and (with an A/A run) stock-b, each median [min..max] over its rounds. */
    private static String perSide(Report r, String what, ToDoubleFunction<RoundResult> f, int decimals) {
        return String.format(
                Locale.ROOT,
                "  %s: stock %s, kpipe %s%s%n",
                what,
                stat(r.stat(Variant.STOCK, f), decimals),
                stat(r.stat(Variant.KPIPE, f), decimals),
                r.hasControl() ? ", " + RoundOrder.CONTROL_LABEL + " " + stat(r.controlStat(f), decimals) : "");
    }

    /** The leader's network and handler threads: wake-ups and CPU per produce request as ratios per round pair. */
    private static String threadRatios(String label, Function<ToDoubleFunction<RoundResult>, Stat> ratioOf) {
        return String.format(
                Locale.ROOT,
                "  %s wake-ups/request network %s   handler %s   CPU/request network %s   handler %s%n",
                label,
                ratio(ratioOf.apply(CostLines::networkWakeups)),
                ratio(ratioOf.apply(CostLines::handlerWakeups)),
                ratio(ratioOf.apply(CostLines::networkCpu)),
                ratio(ratioOf.apply(CostLines::handlerCpu)));
    }

    static double networkWakeups(RoundResult r) {
        return figure(r, "leader_network_wakeups_per_produce_request");
    }

    static double handlerWakeups(RoundResult r) {
        return figure(r, "leader_handler_wakeups_per_produce_request");
    }

    static double networkCpu(RoundResult r) {
        return figure(r, "leader_network_cpu_us_per_produce_request");
    }

    static double handlerCpu(RoundResult r) {
        return figure(r, "leader_handler_cpu_us_per_produce_request");
    }

    static double gcCpu(RoundResult r) {
        return figure(r, "leader_gc_cpu_us_per_produce_request");
    }

    static double kpipeWakeups(RoundResult r) {
        return figure(r, "kpipe_processor_wakeups_per_produce_request");
    }

    private static double figure(RoundResult r, String key) {
        return r.extra().get(key) instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** p50, p99 and p999 as ratios per round pair, e.g. kpipe/stock. */
    private static String latencyRatios(String label, Function<ToDoubleFunction<RoundResult>, Stat> ratioOf) {
        return String.format(
                Locale.ROOT,
                "  %s latency p50 %s   p99 %s   p999 %s%n",
                label,
                ratio(ratioOf.apply(RoundResult::p50Ms)),
                ratio(ratioOf.apply(RoundResult::p99Ms)),
                ratio(ratioOf.apply(RoundResult::p999Ms)));
    }
}
