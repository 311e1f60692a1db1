// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.HarnessSettings;
import java.io.PrintStream;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * Runs one offset-commit scenario (S6 or S7, {@link CommitScenario}) for {@link BenchMain}: starts one cluster per
 * side (one after another), prepares each ({@link CommitRounds#prepare}), runs the rounds in {@link RoundOrder}'s
 * alternation (odd rounds stock, kpipe, kpipe-excl; even rounds kpipe-excl, kpipe, stock), prints a line per round and
 * the table, and stops the clusters. Called from the benchmark's main thread.
 */
final class CommitBench {
    private CommitBench() {}

    /**
     * @param s the scenario
     * @param o the options
     * @param settings the harness settings
     * @param progress the progress line
     * @param out where the lines and the table go
     * @return the scenario's report
     * @throws Exception if a cluster fails to start or a round fails
     */
    static CommitReport run(
            CommitScenario s, BenchOptions o, HarnessSettings settings, Progress progress, PrintStream out)
            throws Exception {
        CommitReport report = new CommitReport(s);
        progress.context(s.label() + ": starting " + s.sides().size() + " clusters");
        Map<CommitSide, Cluster> clusters = start(s, o, settings);
        try {
            for (Cluster c : clusters.values()) {
                progress.context(s.label() + ": preparing " + c.spec().name());
                CommitRounds.prepare(c, s, o);
            }
            progress.clear();
            for (int round = 1; round <= o.rounds(); round++) {
                for (CommitSide side : RoundOrder.of(
                        round,
                        CommitSide.STOCK,
                        CommitSide.KPIPE,
                        s.sides().contains(CommitSide.KPIPE_EXCL) ? CommitSide.KPIPE_EXCL : null)) {
                    progress.context(String.format(
                            Locale.ROOT, "%s round %d/%d %s", s.label(), round, o.rounds(), side.label()));
                    Cluster c = clusters.get(side);
                    double loadBefore = LoadAverage.beforeRound(o.sides(), progress, out);
                    CommitResult r = (s.isStreams()
                                    ? CommitRounds.runS7(c, s, side, round, o, progress)
                                    : CommitRounds.runS6(c, s, side, round, o, progress))
                            .withFigures(LoadAverage.around(loadBefore, LoadAverage.now()));
                    report.add(r);
                    progress.clear();
                    out.println(r.line());
                    out.flush();
                }
            }
            progress.clear();
            out.println();
            out.print(report.table(o));
            out.flush();
            return report;
        } finally {
            progress.context(s.label() + ": stopping clusters");
            long t0 = System.nanoTime();
            for (Cluster c : clusters.values()) {
                c.nodes().forEach(n -> n.kill());
            }
            for (Cluster c : clusters.values()) {
                c.close();
            }
            progress.clear();
            System.err.printf(
                    Locale.ROOT, "bench: %s clusters stopped in %.1f s%n", s.label(), (System.nanoTime() - t0) / 1e9);
        }
    }

    /**
     * Starts the sides' clusters one after another (three 2-node clusters at once do not become ready within the
     * harness's 90 s on a loaded 2-core machine); a failure closes the ones created.
     */
    private static Map<CommitSide, Cluster> start(CommitScenario s, BenchOptions o, HarnessSettings settings) {
        Map<CommitSide, Cluster> clusters = new EnumMap<>(CommitSide.class);
        try {
            for (CommitSide side : s.sides()) {
                Cluster c = Cluster.create(s.spec(side, o), settings);
                clusters.put(side, c);
                c.start();
            }
        } catch (RuntimeException | Error e) {
            clusters.values().forEach(Cluster::close);
            throw e;
        }
        return clusters;
    }
}
