// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import dev.kpipe.it.cli.Flags;
import java.time.Duration;

/**
 * What a {@link SoakRun} does. Immutable.
 *
 * @param duration the measured load phase (between the start and end heap readings)
 * @param warmup load before the start heap reading (creates every kind of broker state once: producer ids, groups,
 *     fetch sessions, client sensors), not part of {@code duration}
 * @param restartEvery how often one client (round robin over all producers, consumers and the admin client) is
 *     closed and created again
 * @param recordsPerSecond records per second of each idempotent producer (the acks=0 producer sends half that)
 * @param idempotentProducers number of idempotent, acks=all producers (5 requests in flight each)
 * @param maxHeapGrowthBytes the most the broker heap after a full GC may grow from start to end, bytes
 * @param brokerHeap {@code -Xmx} of each broker JVM, or null for the harness default ({@code kpipe.it.heap})
 * @param kafkaVersion the laid-out Kafka version the brokers run, or null for the build's
 * @param kpipe whether the brokers run kpipe (false: stock Kafka, kpipe not installed, for comparing heap growth;
 *     kpipe's own checks are skipped)
 */
public record SoakOptions(
        Duration duration,
        Duration warmup,
        Duration restartEvery,
        int recordsPerSecond,
        int idempotentProducers,
        long maxHeapGrowthBytes,
        String brokerHeap,
        String kafkaVersion,
        boolean kpipe) {

    /** System property {@code SoakIT} reads its measured load phase from, in seconds (default 105, + 15 s warm-up). */
    public static final String DURATION_PROPERTY = "kpipe.it.soak.duration.s";

    static final String USAGE = """
      usage: BenchMain --scenario soak [options]   (./demo.sh --scenario soak ...)
        --duration-s N          measured load phase in seconds (default 1200)
        --warmup-s N            load before the start heap reading (default: a tenth of the duration, 15..60)
        --restart-every-s N     one client closed and created again every N s, round robin (default 10)
        --rate N                records/s per idempotent producer (default 800; the acks=0 producer sends N/2)
        --producers N           idempotent acks=all producers (default 3)
        --max-heap-growth-mib N allowed growth of each broker's heap after full GC, start to end (default 32)
        --broker-heap SIZE      broker -Xmx (default 512m)
        --kafka-version V       run integration-tests/target/kafka-V (default: the build's)
        --stock                 run stock Kafka (kpipe not installed) under the same load, to compare heap growth
      """;

    /**
     * @param duration the measured load phase
     * @return the defaults for that duration: warm-up a tenth of it (15 to 60 s), a client restart every 10 s, 800
     *     records/s per producer, 3 idempotent producers, 32 MiB allowed heap growth, default heap and Kafka version
     */
    public static SoakOptions defaults(Duration duration) {
        long warm = Math.max(15, Math.min(60, duration.toSeconds() / 10));
        return new SoakOptions(
                duration, Duration.ofSeconds(warm), Duration.ofSeconds(10), 800, 3, 32L << 20, null, null, true);
    }

    /**
     * Parses the command line of {@code BenchMain --scenario soak}.
     *
     * @param args the arguments ({@code --scenario soak} is accepted and ignored)
     * @return the options
     * @throws IllegalArgumentException on a bad argument (message says which)
     */
    static SoakOptions parse(String[] args) {
        Long duration = null;
        Long warmup = null;
        long restart = 10;
        int rate = 800;
        int producers = 3;
        long growthMib = 32;
        String heap = null;
        String version = null;
        boolean kpipe = true;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--scenario" -> {
                    String v = Flags.value(args, ++i, a);
                    if (!v.equalsIgnoreCase("soak")) {
                        throw new IllegalArgumentException("--scenario soak cannot be combined with " + v);
                    }
                }
                case "--duration-s" -> duration = Flags.positiveLong(Flags.value(args, ++i, a), a);
                case "--warmup-s" -> warmup = Flags.positiveLong(Flags.value(args, ++i, a), a);
                case "--restart-every-s" -> restart = Flags.positiveLong(Flags.value(args, ++i, a), a);
                case "--rate" -> rate = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--producers" -> producers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--max-heap-growth-mib" -> growthMib = Flags.positiveLong(Flags.value(args, ++i, a), a);
                case "--broker-heap" -> heap = Flags.value(args, ++i, a);
                case "--kafka-version" -> version = Flags.value(args, ++i, a);
                case "--stock" -> kpipe = false;
                default -> throw new IllegalArgumentException("unknown soak argument: " + a);
            }
        }
        SoakOptions d = defaults(Duration.ofSeconds(duration == null ? 1200 : duration));
        return new SoakOptions(
                d.duration(),
                warmup == null ? d.warmup() : Duration.ofSeconds(warmup),
                Duration.ofSeconds(restart),
                rate,
                producers,
                growthMib << 20,
                heap,
                version,
                kpipe);
    }
}
