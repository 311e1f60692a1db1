// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * CPU accounting over a round's window, to tell a disturbed measurement from a clean one on a shared machine: the
 * machine's process CPU time (Linux {@code /proc/stat}: user+nice+system), the CPU time of the benchmark JVM and of
 * the broker JVMs under test; "other" = machine minus those. Interrupt time (irq+softirq, where the kernel does most
 * loopback networking, including ours, and which no process is charged for) and steal are reported apart. Linux only
 * (elsewhere the machine figures are NaN). Immutable snapshots; call from one thread.
 */
final class CpuSampler {
    private static final double JIFFY_SECONDS = 0.01; // USER_HZ = 100 on Linux

    /** One reading: all values in CPU-seconds since boot or process start. */
    record Reading(long nanos, double machineBusy, double irq, double steal, double bench, double brokers) {}

    private final List<Long> brokerPids;

    /**
     * @param brokerPids process ids of the broker JVMs under test
     */
    CpuSampler(List<Long> brokerPids) {
        this.brokerPids = brokerPids;
    }

    /** @return the current reading */
    Reading read() {
        double busy = Double.NaN;
        double irq = Double.NaN;
        double steal = Double.NaN;
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            // cpu user nice system idle iowait irq softirq steal ...
            busy = (Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3])) * JIFFY_SECONDS;
            irq = (Long.parseLong(f[6]) + Long.parseLong(f[7])) * JIFFY_SECONDS;
            steal = f.length > 8 ? Long.parseLong(f[8]) * JIFFY_SECONDS : 0;
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        double bench = cpu(ProcessHandle.current());
        double brokers = 0;
        for (long pid : brokerPids) {
            brokers += ProcessHandle.of(pid).map(CpuSampler::cpu).orElse(0.0);
        }
        return new Reading(System.nanoTime(), busy, irq, steal, bench, brokers);
    }

    private static double cpu(ProcessHandle p) {
        return p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L) / 1e9;
    }

    /**
     * @param a reading at the window start
     * @param b reading at the window end
     * @return average cores busy over the window: {bench JVM, brokers under test, other processes, irq+softirq, steal}
     */
    static double[] cores(Reading a, Reading b) {
        double s = (b.nanos - a.nanos) / 1e9;
        double bench = (b.bench - a.bench) / s;
        double brokers = (b.brokers - a.brokers) / s;
        double other = (b.machineBusy - a.machineBusy) / s - bench - brokers;
        return new double[] {bench, brokers, Math.max(0, other), (b.irq - a.irq) / s, (b.steal - a.steal) / s};
    }
}
