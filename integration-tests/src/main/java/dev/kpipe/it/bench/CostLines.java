// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static dev.kpipe.it.bench.Report.ratio;
import static dev.kpipe.it.bench.Report.stat;

import java.util.Locale;

/** The cost lines of a {@link Report}'s table (S2, S2F, any scenario with an A/A control). Stateless. */
final class CostLines {
    private CostLines() {}

    /**
     * Broker CPU per record and produce requests per record side by side, kpipe/stock and the A/A stock-b/stock: a
     * kpipe/stock CPU ratio outside the A/A range is a cost; a requests/record ratio away from 1 says the batches
     * changed (which changes the CPU per record by itself).
     */
    static String of(Report r) {
        Scenario scenario = r.scenario();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "  broker CPU us/record: stock %s, kpipe %s%s%n",
                stat(r.stat(Variant.STOCK, Report::cpuPerRecord), 2),
                stat(r.stat(Variant.KPIPE, Report::cpuPerRecord), 2),
                r.hasControl()
                        ? ", " + RoundOrder.CONTROL_LABEL + " " + stat(r.controlStat(Report::cpuPerRecord), 2)
                        : ""));
        sb.append(String.format(
                Locale.ROOT,
                "  produce requests per 1000 records: stock %s, kpipe %s%s%n",
                stat(r.stat(Variant.STOCK, Report::requestsPerThousandRecords), 2),
                stat(r.stat(Variant.KPIPE, Report::requestsPerThousandRecords), 2),
                r.hasControl()
                        ? ", " + RoundOrder.CONTROL_LABEL + " "
                                + stat(r.controlStat(Report::requestsPerThousandRecords), 2)
                        : ""));
        sb.append(String.format(
                Locale.ROOT,
                "  processor rounds (selector polls) per produce request: stock %s, kpipe %s%s%n",
                stat(r.stat(Variant.STOCK, Report::selectsPerRequest), 2),
                stat(r.stat(Variant.KPIPE, Report::selectsPerRequest), 2),
                r.hasControl()
                        ? ", " + RoundOrder.CONTROL_LABEL + " " + stat(r.controlStat(Report::selectsPerRequest), 2)
                        : ""));
        if (r.hasPairs()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  kpipe/stock   CPU/record %s   requests/record %s   rounds/request %s   records/s %s%n",
                    ratio(r.ratio(Report::cpuPerRecord)),
                    ratio(r.ratio(Report::requestsPerThousandRecords)),
                    ratio(r.ratio(Report::selectsPerRequest)),
                    ratio(r.ratio(RoundResult::recordsPerSec))));
        }
        if (r.hasControl()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  A/A %s/stock CPU/record %s   requests/record %s   records/s %s" + "  (the noise)%n",
                    RoundOrder.CONTROL_LABEL,
                    ratio(r.controlRatio(Report::cpuPerRecord)),
                    ratio(r.controlRatio(Report::requestsPerThousandRecords)),
                    ratio(r.controlRatio(RoundResult::recordsPerSec))));
        }
        if (scenario.isFixedLoad()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  offered %,d records/s; acknowledged in the window: stock %s, kpipe %s%n",
                    scenario.offeredRecordsPerSec,
                    stat(r.stat(Variant.STOCK, RoundResult::recordsPerSec), 0),
                    stat(r.stat(Variant.KPIPE, RoundResult::recordsPerSec), 0)));
        }
        return sb.toString();
    }
}
