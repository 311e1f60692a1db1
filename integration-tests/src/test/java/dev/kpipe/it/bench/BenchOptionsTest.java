// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's command line ({@link BenchOptions}, {@link MeasureOptions}): the defaults, every flag of the usage
 * text parsed to its value, the invocations that README.md, docs/benchmark.md and demo.sh show, and bad values
 * failing with the flag named. No brokers.
 */
class BenchOptionsTest {
    /** Every flag of the usage text, each with a value other than its default. */
    private static final String[] EVERY_FLAG = {
        "--scenario",
        "s1,S2F,S1L,S5,S3,s8,s9,S10,s11,s6,S7",
        "--window-ms",
        "50, 250",
        "--rounds",
        "7",
        "--duration-s",
        "11",
        "--warmup-s",
        "0",
        "--kafka-version",
        "3.9.1",
        "--stock",
        "disabled",
        "--broker-heap",
        "2g",
        "--broker-jvm-opts",
        "-XX:+AlwaysPreTouch -Dx=y",
        "--jfr",
        "--sequential-start",
        "--s1-record-bytes",
        "512",
        "--s1-buffer-kib",
        "300",
        "--s2-producers",
        "6",
        "--s2-record-bytes",
        "64",
        "--s2-buffer-kib",
        "2048",
        "--s3-producers",
        "40",
        "--s3-budget-mib",
        "3",
        "--s3-record-bytes",
        "2000",
        "--s3-buffer-kib",
        "96",
        "--batch-bytes",
        "32768",
        "--out",
        "/tmp/bench-out",
        "--s2f-rate",
        "9000",
        "--s2f-producers",
        "3",
        "--no-aa",
        "--s1l-window-ms",
        "120",
        "--s1l-follower-fetch-max-kib",
        "2048",
        "--s5-add-partitions-retry-max-ms",
        "25",
        "--client",
        "kcat-idempotent,kafkajs",
        "--s8-rate",
        "3200",
        "--s8-producers",
        "8",
        "--s8-linger-ms",
        "0",
        "--s8-kpipe-linger-ms",
        "12",
        "--s6-rate",
        "500",
        "--s7-input-records",
        "70000",
        "--no-excl",
        "--s9-slow-readers",
        "3",
        "--s9-active",
        "--s9-slow-quota-kib",
        "2048",
        "--s9-good-rate",
        "4000",
        "--s10-connections",
        "1000, 5000",
        "--s11-excluded-producers",
        "40",
        "--s11-excluded-rate",
        "4000",
        "--s11-pipelined-producers",
        "3",
        "--s11-pipelined-rate",
        "3000",
        "--broker-cpus",
        "1",
        "--client-cpus",
        "0,2-3",
        "--kpipe-observer",
        "request-timing",
        "--settle-load",
        "1.5",
        "--settle-max-s",
        "240",
    };

    @Test
    void theDefaults() {
        BenchOptions o = BenchOptions.parse(new String[0]);
        assertEquals(
                new BenchOptions(
                        false,
                        false,
                        List.of("S1"),
                        List.of(100),
                        5,
                        30,
                        5,
                        null,
                        null,
                        false,
                        "1g",
                        null,
                        false,
                        true,
                        1024,
                        256 * 1024,
                        4,
                        100,
                        1024 * 1024,
                        16384,
                        300,
                        8L * 1024 * 1024,
                        1024,
                        128 * 1024,
                        new MeasureOptions(20_000, 4, true, 250, 64 * 1024 * 1024, 0, List.of(), 6_400, 16, 5, -1),
                        new CommitOptions(2_000, 3_000_000, true),
                        new RawOptions(8, false, 0, 0, List.of(2), List.of(1000)),
                        new FleetOptions(50, 5_000, 5, 5_000, List.of(2)),
                        new SideOptions(null, null, null, 0, 300)),
                o);
        assertEquals(MeasureOptions.DEFAULTS, o.measure());
        assertEquals(CommitOptions.DEFAULTS, o.commits());
        assertEquals(RawOptions.DEFAULTS, o.raw());
        assertEquals(SideOptions.DEFAULTS, o.sides());
    }

    @Test
    void everyFlagOfTheUsageParsesToItsValue() {
        BenchOptions o = BenchOptions.parse(EVERY_FLAG);
        assertEquals(
                new BenchOptions(
                        false,
                        false,
                        List.of("S1", "S2F", "S1L", "S5", "S3", "S8", "S9", "S10", "S11", "S6", "S7"),
                        List.of(50, 250),
                        7,
                        11,
                        0,
                        "3.9.1",
                        Path.of("/tmp/bench-out"),
                        true,
                        "2g",
                        "-XX:+AlwaysPreTouch -Dx=y",
                        true,
                        false,
                        512,
                        300 * 1024,
                        6,
                        64,
                        2048 * 1024,
                        32768,
                        40,
                        3L * 1024 * 1024,
                        2000,
                        96 * 1024,
                        new MeasureOptions(
                                9000,
                                3,
                                false,
                                120,
                                2048 * 1024,
                                25,
                                List.of(BenchClient.KCAT_IDEMPOTENT, BenchClient.KAFKAJS),
                                3200,
                                8,
                                0,
                                12),
                        new CommitOptions(500, 70_000, false),
                        new RawOptions(3, true, 2048, 4000, List.of(50, 250), List.of(1000, 5000)),
                        new FleetOptions(40, 4_000, 3, 3_000, List.of(50, 250)),
                        new SideOptions(
                                CpuList.parse("1", "x"),
                                CpuList.parse("0,2-3", "x"),
                                KpipeObserver.REQUEST_TIMING,
                                1.5,
                                240)),
                o);
    }

    @Test
    void theTestAboveCoversEveryFlagOfTheUsage() {
        Set<String> usage = new TreeSet<>();
        Matcher m = Pattern.compile("--[a-z0-9][a-z0-9-]*").matcher(BenchOptions.USAGE);
        while (m.find()) {
            usage.add(m.group());
        }
        usage.remove("--help"); // "--scenario soak --help": BenchMain's, before parsing
        Set<String> tested = new TreeSet<>();
        for (String a : EVERY_FLAG) {
            if (a.startsWith("--")) {
                tested.add(a);
            }
        }
        assertEquals(usage, tested);
    }

    @Test
    void theDocumentedInvocations() {
        BenchOptions all = parse("--scenario all --window-ms 100,250 --rounds 5 --duration-s 30");
        assertEquals(List.of("S1", "S2", "S3"), all.scenarios());
        assertEquals(List.of(100, 250), all.windowsMs());
        assertEquals(5, all.rounds());
        assertEquals(30, all.durationSeconds());

        BenchOptions demo = parse("demo --kafka-version 3.8.1");
        assertTrue(demo.demo());
        assertEquals("3.8.1", demo.kafkaVersion());
        assertEquals(List.of(100), demo.windowsMs());
        assertEquals(List.of(3, 15, 3), List.of(demo.rounds(), demo.durationSeconds(), demo.warmupSeconds()));

        BenchOptions sweep = parse("--scenario sweep");
        assertTrue(sweep.sweep());
        assertEquals(List.of("S1"), sweep.scenarios());
        assertEquals(Sweep.DEFAULT_WINDOWS_MS, sweep.windowsMs());
        assertEquals(List.of(2, 12, 3), List.of(sweep.rounds(), sweep.durationSeconds(), sweep.warmupSeconds()));

        BenchOptions s2f = parse("--scenario S2F --rounds 1 --duration-s 60 --no-aa --jfr");
        assertEquals(List.of("S2F"), s2f.scenarios());
        assertEquals(List.of(1, 60, 5), List.of(s2f.rounds(), s2f.durationSeconds(), s2f.warmupSeconds()));
        assertFalse(s2f.measure().aaControl());
        assertTrue(s2f.jfr());

        BenchOptions s5 = parse("--scenario S5 --window-ms 250 --rounds 3 --duration-s 15 --warmup-s 3"
                + " --s5-add-partitions-retry-max-ms 10");
        assertEquals(List.of("S5"), s5.scenarios());
        assertEquals(List.of(250), s5.windowsMs());
        assertEquals(10, s5.measure().s5AddPartitionsRetryMaxMs());
        assertEquals(3, s5.warmupSeconds());

        BenchOptions s3 = parse("--scenario S3 --rounds 3 --duration-s 20 --s3-producers 100 --s3-budget-mib 4");
        assertEquals(100, s3.s3Producers());
        assertEquals(4L << 20, s3.s3BudgetBytes());

        BenchOptions s1l = parse("--scenario S1L --s1l-window-ms 100 --s1l-follower-fetch-max-kib 1024");
        assertEquals(100, s1l.measure().s1lWindowMs());
        assertEquals(
                MeasureOptions.KAFKA_DEFAULT_REPLICA_FETCH_MAX_BYTES,
                s1l.measure().s1lFollowerFetchMaxBytes());

        BenchOptions s6s7 = parse("--scenario S6,S7 --rounds 3 --duration-s 15 --warmup-s 3");
        assertEquals(List.of("S6", "S7"), s6s7.scenarios());
        assertEquals(List.of(100), s6s7.windowsMs(), "W = 100 ms unless given");
        assertEquals(List.of(3, 15, 3), List.of(s6s7.rounds(), s6s7.durationSeconds(), s6s7.warmupSeconds()));
        assertEquals(CommitOptions.DEFAULTS, s6s7.commits());
        assertTrue(s6s7.commits().excl(), "kpipe-excl runs unless --no-excl");

        // docs/benchmark.md, "S8: acks=all at a fixed offered load": one command sweeps W
        BenchOptions s8 = parse("--scenario S8 --window-ms 1,2 --s8-producers 16 --s8-rate 6400 --rounds 4"
                + " --duration-s 20 --warmup-s 3");
        assertEquals(List.of("S8"), s8.scenarios());
        assertEquals(List.of(1, 2), s8.windowsMs());
        assertEquals(
                List.of(16, 6400, 5),
                List.of(
                        s8.measure().s8Producers(),
                        s8.measure().s8RecordsPerSec(),
                        s8.measure().s8LingerMs()));
        assertEquals(List.of(4, 20, 3), List.of(s8.rounds(), s8.durationSeconds(), s8.warmupSeconds()));
        assertTrue(s8.measure().aaControl(), "an A/A run unless --no-aa");
        BenchOptions s8Short = parse("--scenario S8 --window-ms 2 --s8-producers 4 --s8-rate 2000 --rounds 1"
                + " --duration-s 5 --warmup-s 1 --no-aa");
        assertFalse(s8Short.measure().aaControl());
        assertEquals(
                List.of(1, 2, 5, 10),
                parse("--scenario S8 --window-ms 1,2,5,10").windowsMs());

        // docs/benchmark.md, "S9: slow readers beside a good producer": W = 2 ms unless --window-ms is given
        BenchOptions s9 = parse("--scenario S9 --rounds 4 --duration-s 20 --warmup-s 5");
        assertEquals(List.of("S9"), s9.scenarios());
        assertEquals(List.of(2), s9.raw().s9WindowsMs(), "S9's own default W");
        assertEquals(List.of(100), s9.windowsMs(), "the others' default W is unchanged");
        assertEquals(8, s9.raw().s9SlowReaders());
        BenchOptions s9Smoke =
                parse("--scenario S9 --window-ms 5 --s9-slow-readers 2 --rounds 1 --duration-s 5" + " --warmup-s 2");
        assertEquals(List.of(5), s9Smoke.raw().s9WindowsMs());
        assertEquals(2, s9Smoke.raw().s9SlowReaders());
        assertEquals(List.of(1, 5, 2), List.of(s9Smoke.rounds(), s9Smoke.durationSeconds(), s9Smoke.warmupSeconds()));
        assertFalse(s9.raw().s9Active(), "the stalled regime unless --s9-active");
        // docs/benchmark.md, S9's active regime: the slow readers replaced when the broker stops reading them
        BenchOptions s9Active = parse("--scenario S9 --s9-active --rounds 4 --duration-s 20 --warmup-s 10");
        assertTrue(s9Active.raw().s9Active());
        assertEquals(List.of(2), s9Active.raw().s9WindowsMs());

        // docs/benchmark.md, "S10: connections at scale": one run per connection count
        BenchOptions s10 = parse("--scenario S10 --s10-connections 1000,5000 --rounds 4 --duration-s 20");
        assertEquals(List.of("S10"), s10.scenarios());
        assertEquals(List.of(1000, 5000), s10.raw().s10Connections());
        assertEquals(
                List.of(200),
                parse("--scenario S10 --s10-connections 200 --rounds 1 --duration-s 5 --warmup-s 2")
                        .raw()
                        .s10Connections());

        // docs/benchmark.md, "S11: a mixed fleet": W = 2 ms unless --window-ms is given
        BenchOptions s11 = parse("--scenario S11 --rounds 4 --duration-s 20 --warmup-s 5");
        assertEquals(List.of("S11"), s11.scenarios());
        assertEquals(FleetOptions.DEFAULTS, s11.fleet());
        assertEquals(List.of(2), s11.fleet().windowsMs(), "S11's own default W");
        BenchOptions s11Smoke = parse(
                "--scenario S11 --window-ms 5 --s11-excluded-producers 10 --s11-excluded-rate 1000"
                        + " --s11-pipelined-producers 2 --s11-pipelined-rate 400 --rounds 1 --duration-s 5 --warmup-s 2");
        assertEquals(new FleetOptions(10, 1000, 2, 400, List.of(5)), s11Smoke.fleet());

        BenchOptions stock = parse("--stock not-installed --broker-heap 512m --broker-jvm-opts -XX:+UseParallelGC");
        assertFalse(stock.stockInstallsPlugin());
        assertEquals("512m", stock.brokerHeap());
        assertEquals("-XX:+UseParallelGC", stock.brokerJvmOpts());
        assertNull(stock.outDir());
    }

    @Test
    void laterFlagsWinAndTheMeasureFlagsMixWithTheOthers() {
        BenchOptions o = parse("--s2f-rate 100 --rounds 2 --s2f-rate 200 --no-aa --s2f-producers 9 --scenario S2,S2");
        assertEquals(
                new MeasureOptions(200, 9, false, 250, 64 * 1024 * 1024, 0, List.of(), 6_400, 16, 5, -1), o.measure());
        assertEquals(2, o.rounds());
        assertEquals(List.of("S2"), o.scenarios(), "duplicates dropped");
    }

    @Test
    void aBadValueFailsNamingTheFlag() {
        for (String flag : new String[] {
            "--window-ms",
            "--rounds",
            "--duration-s",
            "--s1-record-bytes",
            "--s1-buffer-kib",
            "--s2-producers",
            "--s2-record-bytes",
            "--s2-buffer-kib",
            "--s3-producers",
            "--s3-budget-mib",
            "--s3-record-bytes",
            "--s3-buffer-kib",
            "--batch-bytes",
            "--s2f-rate",
            "--s2f-producers",
            "--s1l-window-ms",
            "--s1l-follower-fetch-max-kib",
            "--s5-add-partitions-retry-max-ms",
            "--s6-rate",
            "--s7-input-records",
            "--s8-rate",
            "--s8-producers",
            "--s9-slow-readers",
            "--s9-slow-quota-kib",
            "--s10-connections"
        }) {
            assertEquals(flag + " needs a number: x", fails(flag, "x"));
            assertEquals(flag + " must be > 0: 0", fails(flag, "0"));
            assertEquals(flag + " needs a value", fails(flag));
        }
        assertEquals(
                "--s1l-follower-fetch-max-kib at most 1048576 (1 GiB): 1048577",
                fails("--s1l-follower-fetch-max-kib", "1048577"));
        assertEquals(
                1 << 30, parse("--s1l-follower-fetch-max-kib 1048576").measure().s1lFollowerFetchMaxBytes());
        assertEquals("--s8-linger-ms needs a number: x", fails("--s8-linger-ms", "x"));
        assertEquals("--s8-linger-ms must be >= 0: -1", fails("--s8-linger-ms", "-1"));
        assertEquals("--s8-linger-ms needs a value", fails("--s8-linger-ms"));
        assertEquals(0, parse("--s8-linger-ms 0").measure().s8LingerMs());
        assertEquals("--s8-kpipe-linger-ms must be >= 0: -1", fails("--s8-kpipe-linger-ms", "-1"));
        assertEquals(-1, parse("--s8-linger-ms 0").measure().s8KpipeLingerMs());
        assertEquals("--stock takes not-installed or disabled: on", fails("--stock", "on"));
        assertEquals("unknown scenario: S4", fails("--scenario", "S1,S4"));
        assertEquals("--s10-connections must be > 0: 0", fails("--s10-connections", "1000,0"));
        assertEquals("unknown argument: --bogus", fails("--bogus"));
        assertEquals("--out needs a value", fails("--out"));
        assertEquals("--warmup-s needs a number: x", fails("--warmup-s", "x"), "not Integer.parseInt's message");
        assertEquals("--warmup-s needs a value", fails("--warmup-s"));
        assertEquals(
                "--client: unknown client librdkafka (known: java-idempotent, java, kcat-idempotent, kcat, kcat-100,"
                        + " kafkajs-idempotent, kafkajs, all)",
                fails("--client", "kcat,librdkafka"));
    }

    @Test
    void clientsAreTakenInTheOrderGivenAndAllIsEveryOne() {
        assertEquals(
                List.of(BenchClient.KCAT_100, BenchClient.JAVA),
                parse("--client kcat-100,java,kcat-100").measure().clients());
        assertEquals(
                List.of(BenchClient.values()), parse("--client all").measure().clients());
        assertEquals(List.of(), parse("--scenario S1").measure().clients(), "S1's Java producer unless given");
    }

    private static BenchOptions parse(String line) {
        return BenchOptions.parse(line.split(" "));
    }

    private static String fails(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(args))
                .getMessage();
    }
}
