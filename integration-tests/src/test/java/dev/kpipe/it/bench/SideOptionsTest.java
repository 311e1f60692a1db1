// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link SideOptions} through {@link BenchOptions#parse} (the values of every flag: {@link BenchOptionsTest}): CPU
 * lists in taskset's syntax, bad values failing with the flag named, a CPU that does not exist. No brokers.
 */
class SideOptionsTest {

    @Test
    void cpuListsTakeTasksetsSyntax() {
        SideOptions o = BenchOptions.parse(new String[] {"--broker-cpus", "1", "--client-cpus", "0,2-4"})
                .sides();
        assertEquals(List.of(1), List.copyOf(o.brokerCpus().cpus()));
        assertEquals(List.of(0, 2, 3, 4), List.copyOf(o.clientCpus().cpus()));
        assertEquals("0,2-4", o.clientCpus().text(), "recorded as given");
        assertEquals("0,2,3,4", o.clientCpus().canonical());
    }

    @Test
    void theDocumentedInvocations() {
        // docs/benchmark.md: the quota on the slow readers, CPU pinning, an observer beside kpipe
        assertEquals(
                2048,
                parse("--scenario S9 --s9-active --s9-slow-quota-kib 2048 --rounds 4 --duration-s 20 --warmup-s 10")
                        .raw()
                        .s9SlowQuotaKib());
        SideOptions pinned = parse("--scenario S8 --window-ms 1,2 --broker-cpus 1 --client-cpus 0")
                .sides();
        assertEquals(List.of(1), List.copyOf(pinned.brokerCpus().cpus()));
        assertEquals(List.of(0), List.copyOf(pinned.clientCpus().cpus()));
        assertEquals(
                KpipeObserver.REQUEST_TIMING,
                parse("--scenario S1 --window-ms 100 --kpipe-observer request-timing")
                        .sides()
                        .kpipeObserver());
    }

    @Test
    void aBadValueFailsNamingTheFlag() {
        for (String flag : new String[] {"--broker-cpus", "--client-cpus"}) {
            for (String bad : new String[] {"x", "1-0", "-1", "0,", "0;1"}) {
                assertEquals(flag + " takes a CPU list as taskset -c does (e.g. 1 or 0,2-3): " + bad, fails(flag, bad));
            }
            assertEquals(flag + " needs a value", fails(flag));
        }
        for (String bad : new String[] {"x", "0", "-1", "NaN", "Infinity"}) {
            assertEquals(
                    bad.equals("0") || bad.equals("-1")
                            ? "--settle-load must be > 0: " + bad
                            : "--settle-load needs a number: " + bad,
                    fails("--settle-load", bad));
        }
        assertEquals(
                "--client-cpus 0,5: CPU 5 does not exist (online CPUs: 0-1)",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> CpuList.parse("0,5", "--client-cpus")
                                        .checkExists(CpuList.parse("0-1", "online"), "--client-cpus"))
                        .getMessage());
        assertEquals(
                "--kpipe-observer: unknown observer timing (known: request-timing)",
                fails("--kpipe-observer", "timing"));
        assertEquals("--kpipe-observer needs a value", fails("--kpipe-observer"));
    }

    private static BenchOptions parse(String line) {
        return BenchOptions.parse(line.split(" "));
    }

    private static String fails(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(args))
                .getMessage();
    }
}
