// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import dev.kpipe.it.harness.Cluster;
import java.util.Arrays;
import java.util.Locale;

/**
 * Command line of the soak ({@link SoakRun}): starts the 2-node kpipe cluster, runs the soak, prints its report to
 * stdout (progress to stderr) and stops the cluster. Reached as {@code BenchMain --scenario soak [options]}, so
 * {@code ./demo.sh --scenario soak --duration-s 1200} runs it; {@code --help} lists the options. Exit code 0 if every
 * check passed, 1 if one failed or the run broke, 2 on bad arguments. Ctrl-C stops the brokers (the harness's
 * shutdown hook).
 */
public final class SoakMain {
    private SoakMain() {}

    /**
     * @param args the command line
     * @return whether {@code args} ask for the soak ({@code --scenario soak})
     */
    public static boolean wanted(String[] args) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--scenario") && args[i + 1].equalsIgnoreCase("soak")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs the soak from the command line.
     *
     * @param args see {@link SoakOptions} ({@code --help} prints them)
     * @return the exit code: 0 passed, 1 failed, 2 bad arguments
     */
    public static int run(String[] args) {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.print(SoakOptions.USAGE);
            return 0;
        }
        SoakOptions o;
        try {
            o = SoakOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.print(SoakOptions.USAGE);
            return 2;
        }
        System.err.printf(
                Locale.ROOT,
                "soak: starting a 2-node kpipe cluster; warm-up %d s, then %d s of load%n",
                o.warmup().toSeconds(),
                o.duration().toSeconds());
        try (Cluster cluster = Cluster.start(SoakRun.clusterSpec(o))) {
            System.err.println("soak: cluster up, logs in " + cluster.dir());
            SoakRun.Result r = new SoakRun(cluster, o, System.err).run();
            System.out.print(r.report());
            System.out.flush();
            return r.passed() ? 0 : 1;
        } catch (Exception e) {
            System.err.println("soak failed: " + e);
            e.printStackTrace();
            return 1;
        }
    }
}
