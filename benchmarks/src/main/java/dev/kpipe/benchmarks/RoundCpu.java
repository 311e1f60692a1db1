// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.benchmarks;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.plugin.ConnectionDump;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.function.IntSupplier;

/**
 * {@link RoundScaleBenchmark}'s operations timed in the thread's CPU time rather than wall time, for a machine shared
 * with other work (where JMH's wall-clock ns/op mostly measure the wait for a core): median of 7 batches, each long
 * enough for ~0.2 s of CPU, after a warm-up of the same length.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar dev.kpipe.benchmarks.RoundCpu}.
 */
public final class RoundCpu {

    private RoundCpu() {}

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static int sink;

    /**
     * @param args ignored
     * @throws Exception if a fixture cannot be built
     */
    public static void main(String[] args) throws Exception {
        System.out.printf("%-26s %6s %7s %14s%n", "operation", "idle", "active", "CPU ns/op");
        for (int idle : new int[] {0, 1000, 5000}) {
            for (int active : new int[] {1, 10}) {
                ScaleFixture f = new ScaleFixture(false, 100L << 20);
                f.add(idle, 1, f.idle);
                f.add(active, 1, f.active);
                print("eventRounds", idle, active, time(() -> f.events(f.active)));
            }
            ScaleFixture w = new ScaleFixture(true, 100L << 20);
            w.add(idle, 1, w.idle);
            ByteBudget.Waiter waiter = () -> {};
            if (!w.budget.tryAdmitRead(1) || w.budget.tryReserve(waiter, 100L << 20) > 0) {
                throw new IllegalStateException("the waiter was not queued");
            }
            print("emptyRoundBudgetWaiting", idle, 0, time(() -> {
                w.coordinator.onProcessorRound(w.processor);
                return 1;
            }));
            if (w.budget.waiting() != 1) {
                throw new IllegalStateException("the waiter left the queue");
            }
            print(
                    "connectionDump",
                    idle,
                    0,
                    time(() -> ConnectionDump.of(w.coordinator).length()));
        }
        System.out.println(sink == 42 ? "" : "done");
    }

    private static void print(String op, int idle, int active, double ns) {
        System.out.printf("%-26s %6d %7d %,14.1f%n", op, idle, active, ns);
    }

    /** @return median CPU ns per operation of 7 batches */
    private static double time(IntSupplier op) {
        long n = 1;
        while (true) { // warm-up and calibration: a batch of ~0.2 s of CPU
            long t = cpu();
            for (long i = 0; i < n; i++) {
                sink += op.getAsInt();
            }
            if (cpu() - t > 200_000_000L) {
                break;
            }
            n *= 2;
        }
        double[] r = new double[7];
        for (int b = 0; b < r.length; b++) {
            long t = cpu();
            for (long i = 0; i < n; i++) {
                sink += op.getAsInt();
            }
            r[b] = (cpu() - t) / (double) n;
        }
        java.util.Arrays.sort(r);
        return r[r.length / 2];
    }

    private static long cpu() {
        return THREADS.getCurrentThreadCpuTime();
    }
}
