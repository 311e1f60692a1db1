// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.cli.Flags;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Command-line options of {@link BenchMain}. Immutable.
 *
 * @param demo the short demo preset (S1 at W = 100 ms, 3 rounds x 15 s per side)
 * @param sweep {@code --scenario sweep}: S1 at every W of {@code windowsMs} (default {@link Sweep#DEFAULT_WINDOWS_MS}),
 *     summed up as a table and a chart ({@link Sweep})
 * @param scenarios {@code S1}, {@code S2}, {@code S3}, {@code S2F}, {@code S1L}, {@code S5}, {@code S8}, {@code S9},
 *     {@code S10}, {@code S6} and/or {@code S7}, in run order (S6 and S7, {@link CommitBench}, run after the others)
 * @param windowsMs the follower fetch waits W, in ms, of S1, S5, S8, S6 and S7 (one run of each per W; S9's: {@link
 *     RawOptions#s9WindowsMs})
 * @param rounds rounds per variant (stock and kpipe alternate: stock 1, kpipe 1, stock 2, ...)
 * @param durationSeconds measured window of each round, s
 * @param warmupSeconds unmeasured load before each window, s
 * @param kafkaVersion Kafka version of the laid-out distribution to run, or null for the build's
 * @param outDir where the JSON goes, or null for {@code integration-tests/target/bench}
 * @param stockInstallsPlugin stock = kpipe jar installed with {@code kpipe.enable=false} (default: not installed)
 * @param brokerHeap {@code -Xmx} and {@code -Xms} of each broker JVM
 * @param brokerJvmOpts extra broker JVM options (space separated), or null
 * @param jfr start a JFR recording in every broker JVM ({@code broker.jfr} in each node's folder)
 * @param parallelStart start the stock and kpipe clusters at the same time
 * @param s1RecordBytes S1 record value size, bytes
 * @param s1BufferBytes S1 producer {@code buffer.memory}, bytes
 * @param s2Producers S2 producer count (also S2's partition count)
 * @param s2RecordBytes S2 record value size, bytes
 * @param s2BufferBytes S2 {@code buffer.memory} per producer, bytes
 * @param s3Producers S3 producer count (one connection each to the leader)
 * @param s3BudgetBytes S3 {@code kpipe.max.inflight.bytes}, bytes
 * @param s3RecordBytes S3 record value size, bytes
 * @param s3BufferBytes S3 {@code buffer.memory} per producer, bytes
 * @param batchBytes {@code batch.size}, bytes
 * @param measure the fixed-load (S2F) and large-batch (S1L) options
 * @param commits the offset-commit scenarios' options (S6, S7)
 * @param raw the raw-socket scenarios' options (S9, S10)
 * @param fleet the mixed-fleet scenario's options (S11)
 * @param sides CPU pinning and the observer beside kpipe
 */
record BenchOptions(
        boolean demo,
        boolean sweep,
        List<String> scenarios,
        List<Integer> windowsMs,
        int rounds,
        int durationSeconds,
        int warmupSeconds,
        String kafkaVersion,
        Path outDir,
        boolean stockInstallsPlugin,
        String brokerHeap,
        String brokerJvmOpts,
        boolean jfr,
        boolean parallelStart,
        int s1RecordBytes,
        long s1BufferBytes,
        int s2Producers,
        int s2RecordBytes,
        long s2BufferBytes,
        int batchBytes,
        int s3Producers,
        long s3BudgetBytes,
        int s3RecordBytes,
        long s3BufferBytes,
        MeasureOptions measure,
        CommitOptions commits,
        RawOptions raw,
        FleetOptions fleet,
        SideOptions sides) {

    static final String USAGE = """
      usage: BenchMain demo [options]      S1 at W=100 ms, 3 rounds x 15 s per side (+3 s warm-up)
             BenchMain [options]
      options:
        --scenario S1|S2|S3|all     scenarios to run (default S1; comma list allowed; all = S1,S2,S3)
        --scenario S2F|S1L          S2 at a fixed offered load (with an A/A run); S1 with 1 MiB batches
        --scenario S5               S1 with a transactional producer committing every 500 records (each W)
        --scenario S8               acks=all at a fixed offered load (each W of --window-ms, e.g. 1,2,5,10): S1's
                                    cluster, --s8-producers idempotent producers, one partition and connection
                                    each, --s8-rate records/s in all, with an A/A run
        --scenario S6|S7            offset commits on slow acks: a consumer calling commitAsync after every poll
                                    (S6); a Kafka Streams exactly_once_v2 map application (S7); stock, kpipe and
                                    kpipe-excl (kpipe.offset.commits.pipelined=false), W = --window-ms
        --scenario S9               slow readers beside a good producer: S1's cluster (W = 2 ms unless --window-ms),
                                    one idempotent acks=all producer flat out beside --s9-slow-readers raw
                                    connections that write produce requests and never read a response
        --scenario S10              connections at scale: 1 broker, --s10-connections raw connections, each upgraded
                                    by one produce; one in ten produces 1 request/s (acks=1); heap per connection
                                    from a class histogram, CPU per produce request, kpipe's connection dump timed
        --scenario S11              mixed fleet: S1's cluster (W = 2 ms unless --window-ms), --s11-excluded-producers
                                    acks=all producers on a topic kpipe.topics.exclude names beside
                                    --s11-pipelined-producers pipelined ones, each group at a fixed offered load
        --scenario sweep            S1 at W = 10,25,50,100,250,500 ms (or --window-ms), then a table and a PNG
                                    chart next to the JSON; 2 rounds x 12 s per side unless given (~9 minutes)
        --scenario soak             the reliability soak instead (--scenario soak --help for its options)
        --window-ms 100,250         S1/S5/S8/S9/S6/S7: the follower's replica.fetch.wait.max.ms values W (default 100)
        --rounds N                  rounds per side, stock and kpipe alternating (default 5)
        --duration-s N              measured seconds per round (default 30)
        --warmup-s N                unmeasured seconds before each round's window (default 5)
        --kafka-version V           run the distribution laid out in integration-tests/target/kafka-V
                                    (mvn -pl integration-tests package -Dkpipe.it.kafka.version=V); default: the build's
        --stock not-installed|disabled   stock side: no kpipe jar (default) or jar with kpipe.enable=false
        --broker-heap 1g            broker -Xmx and -Xms (default 1g, as kafka-server-start.sh)
        --broker-jvm-opts "..."     extra broker JVM options
        --jfr                       JFR recording in every broker (broker.jfr in each node folder)
        --sequential-start          start the two clusters one after the other
        --s1-record-bytes N         (default 1024)     --s1-buffer-kib N   S1 buffer.memory (default 256)
        --s2-producers N            (default 4)        --s2-record-bytes N (default 100)
        --s2-buffer-kib N           S2 buffer.memory per producer (default 1024)
        --s3-producers N            S3 producers, one connection each to the leader (default 300)
        --s3-budget-mib N           S3 kpipe.max.inflight.bytes in MiB (default 8)
        --s3-record-bytes N         (default 1024)     --s3-buffer-kib N   S3 buffer.memory (default 128)
        --batch-bytes N             batch.size (default 16384)
        --out DIR                   JSON output folder (default integration-tests/target/bench)
      """ + MeasureOptions.USAGE + CommitOptions.USAGE + RawOptions.USAGE + FleetOptions.USAGE
            + SideOptions.USAGE;

    /**
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException on a bad argument (message says which)
     */
    static BenchOptions parse(String[] args) {
        boolean demo = false;
        boolean sweep = false;
        List<String> scenarios = List.of("S1");
        List<Integer> windows = null;
        Integer rounds = null;
        Integer duration = null;
        Integer warmup = null;
        String kafkaVersion = null;
        Path out = null;
        boolean stockInstalls = false;
        String heap = "1g";
        String jvmOpts = null;
        boolean jfr = false;
        boolean parallel = true;
        int s1Record = 1024;
        long s1Buffer = 256 * 1024;
        int s2Producers = 4;
        int s2Record = 100;
        long s2Buffer = 1024 * 1024;
        int batch = 16384;
        int s3Producers = 300;
        long s3Budget = 8L * 1024 * 1024;
        int s3Record = 1024;
        long s3Buffer = 128 * 1024;
        MeasureOptions.Parser measure = new MeasureOptions.Parser();
        CommitOptions.Parser commits = new CommitOptions.Parser();
        RawOptions.Parser raw = new RawOptions.Parser();
        FleetOptions.Parser fleet = new FleetOptions.Parser();
        SideOptions.Parser sides = new SideOptions.Parser();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "demo" -> demo = true;
                case "--scenario" -> {
                    List<String> l = new ArrayList<>();
                    for (String s : Flags.value(args, ++i, a).split(",")) {
                        String u = s.trim().toUpperCase(Locale.ROOT);
                        switch (u) {
                            case "ALL" -> {
                                l.add("S1");
                                l.add("S2");
                                l.add("S3");
                            }
                            case "S1", "S2", "S3", "S2F", "S1L", "S5", "S8", "S9", "S10", "S11", "S6", "S7" -> l.add(u);
                            case "SWEEP" -> {
                                l.add("S1");
                                sweep = true;
                            }
                            default -> throw new IllegalArgumentException("unknown scenario: " + s);
                        }
                    }
                    scenarios = l.stream().distinct().toList();
                }
                case "--window-ms" -> {
                    List<Integer> l = new ArrayList<>();
                    for (String s : Flags.value(args, ++i, a).split(",")) {
                        l.add(Flags.positiveInt(s.trim(), a));
                    }
                    windows = List.copyOf(l);
                }
                case "--rounds" -> rounds = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--duration-s" -> duration = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--warmup-s" -> warmup = anInt(Flags.value(args, ++i, a), a);
                case "--kafka-version" -> kafkaVersion = Flags.value(args, ++i, a);
                case "--out" -> out = Path.of(Flags.value(args, ++i, a));
                case "--stock" -> {
                    String v = Flags.value(args, ++i, a);
                    if (!v.equals("not-installed") && !v.equals("disabled")) {
                        throw new IllegalArgumentException("--stock takes not-installed or disabled: " + v);
                    }
                    stockInstalls = v.equals("disabled");
                }
                case "--broker-heap" -> heap = Flags.value(args, ++i, a);
                case "--broker-jvm-opts" -> jvmOpts = Flags.value(args, ++i, a);
                case "--jfr" -> jfr = true;
                case "--sequential-start" -> parallel = false;
                case "--s1-record-bytes" -> s1Record = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s1-buffer-kib" -> s1Buffer = Flags.positiveInt(Flags.value(args, ++i, a), a) * 1024L;
                case "--s2-producers" -> s2Producers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s2-record-bytes" -> s2Record = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s2-buffer-kib" -> s2Buffer = Flags.positiveInt(Flags.value(args, ++i, a), a) * 1024L;
                case "--batch-bytes" -> batch = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s3-producers" -> s3Producers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s3-budget-mib" -> s3Budget = Flags.positiveInt(Flags.value(args, ++i, a), a) * 1024L * 1024;
                case "--s3-record-bytes" -> s3Record = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s3-buffer-kib" -> s3Buffer = Flags.positiveInt(Flags.value(args, ++i, a), a) * 1024L;
                default -> {
                    int last = measure.parse(args, i);
                    if (last < 0) {
                        last = commits.parse(args, i);
                    }
                    if (last < 0) {
                        last = raw.parse(args, i);
                    }
                    if (last < 0) {
                        last = fleet.parse(args, i);
                    }
                    if (last < 0) {
                        last = sides.parse(args, i);
                    }
                    if (last < 0) {
                        throw new IllegalArgumentException("unknown argument: " + a);
                    }
                    i = last;
                }
            }
        }
        List<Integer> windowsGiven = windows;
        if (sweep && !demo) {
            if (windows == null) {
                windows = Sweep.DEFAULT_WINDOWS_MS;
            }
            if (rounds == null) {
                rounds = 2;
            }
            if (duration == null) {
                duration = 12;
            }
            if (warmup == null) {
                warmup = 3;
            }
        }
        if (windows == null) {
            windows = List.of(100);
        }
        if (demo) {
            if (rounds == null) {
                rounds = 3;
            }
            if (duration == null) {
                duration = 15;
            }
            if (warmup == null) {
                warmup = 3;
            }
        }
        return new BenchOptions(
                demo,
                sweep,
                scenarios,
                windows,
                rounds == null ? 5 : rounds,
                duration == null ? 30 : duration,
                warmup == null ? 5 : warmup,
                kafkaVersion,
                out,
                stockInstalls,
                heap,
                jvmOpts,
                jfr,
                parallel,
                s1Record,
                s1Buffer,
                s2Producers,
                s2Record,
                s2Buffer,
                batch,
                s3Producers,
                s3Budget,
                s3Record,
                s3Buffer,
                measure.build(),
                commits.build(),
                raw.build(windowsGiven),
                fleet.build(windowsGiven),
                sides.build());
    }

    /** {@code --warmup-s} takes 0 (no warm-up), so not {@link Flags#positiveInt}; a bad value names the flag. */
    private static int anInt(String v, String flag) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " needs a number: " + v, e);
        }
    }
}
