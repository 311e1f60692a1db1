// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import static dev.kpipe.it.soak.SoakChecks.CONNECTION_PIPELINE_CLASS;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Renders a {@link SoakRun.Result} as the printed soak report (any thread; the result is not modified). */
final class SoakReport {
    private final SoakOptions options;
    private final String kafkaVersion;
    private final String kpipeVersion;
    private final SoakStats stats;
    private final long readBack;
    private final long incarnations;
    private final long acks0InLog;
    private final Map<Integer, BrokerProbe.Heap> heapStart;
    private final Map<Integer, BrokerProbe.Heap> heapEnd;
    private final List<Map<Integer, BrokerProbe.Heap>> heapUnderLoad;
    private final Map<Integer, Map<String, Double>> gaugesAtEnd;
    private final Map<Integer, Map<String, Double>> counters;
    private final Map<Integer, Double> upgradesAtStart;
    private final Map<Integer, Long> brokerErrorLines;
    private final List<String> violations;
    private final int violationCount;
    private final long elapsedSeconds;
    private final SoakRun.Result result;

    SoakReport(SoakRun.Result r) {
        this.result = r;
        this.options = r.options();
        this.kafkaVersion = r.kafkaVersion();
        this.kpipeVersion = r.kpipeVersion();
        this.stats = r.stats();
        this.readBack = r.readBack();
        this.incarnations = r.incarnations();
        this.acks0InLog = r.acks0InLog();
        this.heapStart = r.heapStart();
        this.heapEnd = r.heapEnd();
        this.heapUnderLoad = r.heapUnderLoad();
        this.gaugesAtEnd = r.gaugesAtEnd();
        this.counters = r.counters();
        this.upgradesAtStart = r.upgradesAtStart();
        this.brokerErrorLines = r.brokerErrorLines();
        this.violations = r.violations();
        this.violationCount = r.violationCount();
        this.elapsedSeconds = r.elapsedSeconds();
    }

    private boolean passed() {
        return result.passed();
    }

    /** @return the printed summary: counts, heap per broker start/end, gauges and counters at the end, verdict */
    String text() {
        StringBuilder sb = new StringBuilder();
        SoakStats s = stats;
        sb.append(String.format(
                Locale.ROOT,
                "kpipe soak: Kafka %s, 2 brokers, %s; warm-up %d s, load %d s,"
                        + " a client restart every %d s; %d idempotent producers x %d records/s; %s in all%n",
                kafkaVersion,
                options.kpipe() ? "kpipe " + kpipeVersion : "STOCK (kpipe not installed)",
                options.warmup().toSeconds(),
                options.duration().toSeconds(),
                options.restartEvery().toSeconds(),
                options.idempotentProducers(),
                options.recordsPerSecond(),
                clock(elapsedSeconds)));
        sb.append(String.format(
                Locale.ROOT,
                "  records produced : %,d idempotent acks=all (acknowledged, %d producer"
                        + " incarnations) + %,d acks=0 (%,d in the log)%n",
                s.produced.get(),
                incarnations,
                s.acks0Sent.get(),
                acks0InLog));
        sb.append(String.format(
                Locale.ROOT,
                "  records consumed : %,d by the consumer groups; read back %,d: every" + " idempotent record %s%n",
                s.consumed.get(),
                readBack,
                violations.stream().anyMatch(v -> v.contains("seq") || v.contains("record"))
                        ? "NOT once and in order"
                        : "once, in order"));
        sb.append(String.format(
                Locale.ROOT,
                "  errors           : %d%s%n",
                s.errors.get(),
                s.errors.get() == 0 ? "" : " " + s.firstErrors()));
        sb.append(String.format(
                Locale.ROOT,
                "  client restarts  : %d (producers %d, consumers %d, admin %d) + %,d"
                        + " short-lived idempotent producers (%d records each)%n",
                s.restarts(),
                s.producerRestarts.get(),
                s.consumerRestarts.get(),
                s.adminRestarts.get(),
                s.shortLivedProducers.get(),
                SoakWorkers.SHORT_LIVED_RECORDS));
        sb.append(String.format(
                Locale.ROOT,
                "  admin calls      : %,d (%,d topics created and %,d deleted; %,d"
                        + " retries while a new topic was not served yet)%n",
                s.adminCalls.get(),
                s.topicsCreated.get(),
                s.topicsDeleted.get(),
                s.adminRetries.get()));
        for (Integer id : heapStart.keySet()) {
            BrokerProbe.Heap a = heapStart.get(id);
            BrokerProbe.Heap b = heapEnd.get(id);
            StringBuilder mid = new StringBuilder();
            for (Map<Integer, BrokerProbe.Heap> h : heapUnderLoad) {
                mid.append(mid.length() == 0 ? "; under load " : ", ")
                        .append(mib(h.get(id).usedBytes()));
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "  heap after full GC node %d: start %s, end %s (%+.1f MiB); live %s ->"
                            + " %s; kpipe objects %,d -> %,d (%s -> %s)%s%n",
                    id,
                    mib(a.usedBytes()),
                    mib(b.usedBytes()),
                    (b.usedBytes() - a.usedBytes()) / 1048576.0,
                    mib(a.liveBytes()),
                    mib(b.liveBytes()),
                    a.kpipeInstances(),
                    b.kpipeInstances(),
                    kib(a.kpipeBytes()),
                    kib(b.kpipeBytes()),
                    mid));
            StringBuilder top = new StringBuilder();
            b.topGrowth(a, 12)
                    .forEach((name, d) -> top.append(top.length() == 0 ? "" : ", ")
                            .append(String.format(Locale.ROOT, "%s %+,d B (%+,d)", name, d[1], d[0])));
            if (options.kpipe()) {
                sb.append(String.format(
                        Locale.ROOT,
                        "    connections upgraded to pipelined during the load: %,.0f; %s"
                                + " objects at the end: %,d%n",
                        counters.get(id).get("upgrade-total") - upgradesAtStart.get(id),
                        CONNECTION_PIPELINE_CLASS.substring(CONNECTION_PIPELINE_CLASS.lastIndexOf('.') + 1),
                        b.classes().getOrDefault(CONNECTION_PIPELINE_CLASS, new long[2])[0]));
            }
            sb.append(String.format(Locale.ROOT, "    most grown classes: %s%n", top));
            Map<String, Long> kp = b.kpipeChanges(a);
            if (!kp.isEmpty()) {
                sb.append(String.format(Locale.ROOT, "    kpipe instance changes: %s%n", kp));
            }
        }
        gaugesAtEnd.forEach(
                (id, g) -> sb.append(String.format(Locale.ROOT, "  gauges at end node %d: %s%n", id, fmt(g))));
        counters.forEach(
                (id, c) -> sb.append(String.format(Locale.ROOT, "  kpipe counters node %d: %s%n", id, fmt(c))));
        sb.append(String.format(Locale.ROOT, "  broker ERROR log lines: %s%n", brokerErrorLines));
        if (passed()) {
            sb.append("  result: PASS\n");
        } else {
            sb.append("  result: FAIL (").append(violationCount).append(" failed check(s))\n");
            violations.forEach(v -> sb.append("    - ").append(v).append('\n'));
        }
        return sb.toString();
    }

    private static String fmt(Map<String, Double> m) {
        Map<String, String> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(
                k,
                v == Math.rint(v)
                        ? String.format(Locale.ROOT, "%d", v.longValue())
                        : String.format(Locale.ROOT, "%.2f", v)));
        return out.toString().replace("{", "").replace("}", "");
    }

    /** @return one line of every node's heap after full GC: used, live, kpipe objects, full GC count */
    static String heapLine(Map<Integer, BrokerProbe.Heap> heaps) {
        StringBuilder sb = new StringBuilder();
        heaps.forEach((id, h) -> sb.append(sb.length() == 0 ? "" : "; ")
                .append(String.format(
                        Locale.ROOT,
                        "node %d used %s (live %s, kpipe %,d objects / %s, full GCs %d)",
                        id,
                        mib(h.usedBytes()),
                        mib(h.liveBytes()),
                        h.kpipeInstances(),
                        kib(h.kpipeBytes()),
                        h.fullCollections())));
        return sb.toString();
    }

    /** @return {@code bytes} in MiB, one decimal */
    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

    /** @return {@code bytes} in KiB, one decimal */
    static String kib(long bytes) {
        return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }

    /** @return {@code seconds} as minutes:seconds */
    static String clock(long seconds) {
        return String.format(Locale.ROOT, "%d:%02d", seconds / 60, seconds % 60);
    }
}
