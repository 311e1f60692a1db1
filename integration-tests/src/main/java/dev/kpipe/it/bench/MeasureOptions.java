// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.cli.Flags;
import java.util.List;

/**
 * Options of the fixed-load and large-batch scenarios (S2F, S8, S1L; see {@link Scenarios}), parsed beside {@link
 * BenchOptions}. Immutable.
 *
 * @param s2fRecordsPerSec S2F: records/s offered by all producers together (each producer offers its share)
 * @param s2fProducers S2F producer count (also its partition count)
 * @param aaControl S2, S2F and S8: run a second stock cluster in the same alternation (A/A) to show the noise
 * @param s1lWindowMs S1L: the follower's {@code replica.fetch.wait.max.ms} W, ms
 * @param s1lFollowerFetchMaxBytes S1L: the follower's {@code replica.fetch.max.bytes} (bytes per partition per fetch)
 * @param s5AddPartitionsRetryMaxMs S5: every broker's {@code add.partitions.to.txn.retry.backoff.max.ms}, ms, on both
 *     sides; 0 leaves Kafka's default (100 ms)
 * @param clients S1's producer clients ({@code --client}), one S1 run each; empty: S1's Java producer
 * @param s8RecordsPerSec S8: records/s offered by all producers together (each producer offers its share)
 * @param s8Producers S8 producer count (also its partition count: producer i writes partition i only)
 * @param s8LingerMs S8: the producers' {@code linger.ms}
 * @param s8KpipeLingerMs S8: the kpipe side's producers' {@code linger.ms} (the operator's knob against smaller
 *     requests, issue #33), or -1 for {@link #s8LingerMs} on every side
 */
record MeasureOptions(
        int s2fRecordsPerSec,
        int s2fProducers,
        boolean aaControl,
        int s1lWindowMs,
        int s1lFollowerFetchMaxBytes,
        int s5AddPartitionsRetryMaxMs,
        List<BenchClient> clients,
        int s8RecordsPerSec,
        int s8Producers,
        int s8LingerMs,
        int s8KpipeLingerMs) {

    /** Kafka's default {@code replica.fetch.max.bytes}: 1 MiB. */
    static final int KAFKA_DEFAULT_REPLICA_FETCH_MAX_BYTES = 1024 * 1024;

    /**
     * The defaults: S2F 20,000 records/s from 4 producers, A/A on, S1L W = 250 ms with follower fetches up to 64 MiB;
     * S8 6,400 records/s from 16 producers, linger 5 ms.
     */
    static final MeasureOptions DEFAULTS =
            new MeasureOptions(20_000, 4, true, 250, 64 * 1024 * 1024, 0, List.of(), 6_400, 16, 5, -1);

    static final String USAGE = """
        --s2f-rate N                S2F: records/s offered in all (default 20000; 1 KiB records, acks=1, linger 5 ms)
        --s2f-producers N           S2F producers (default 4)
        --no-aa                     S2/S2F/S8: no A/A run (a second stock cluster in the same alternation)
        --s8-rate N                 S8: records/s offered in all (default 6400; 1 KiB records, acks=all)
        --s8-producers N            S8 producers, one partition and one connection each (default 16)
        --s8-linger-ms N            S8 producers' linger.ms (default 5; 0 allowed)
        --s8-kpipe-linger-ms N      S8: the kpipe side's producers' linger.ms instead (stock and stock-b keep
                                    --s8-linger-ms): what a longer linger gives back in requests per record
        --s1l-window-ms N           S1L (1 MiB batches, linger 50 ms): the follower's W (default 250)
        --s1l-follower-fetch-max-kib N  S1L: the follower's replica.fetch.max.bytes in KiB (default 65536;
                                    Kafka's default is 1024)
        --s5-add-partitions-retry-max-ms N  S5 and S7: add.partitions.to.txn.retry.backoff.max.ms on every broker
                                    of every side (default: Kafka's, 100)
        --client C1,C2|all          S1 with each producer client in turn (default: the Java producer as S1 sets it):
                                    java-idempotent, java (kafka-clients, 5 in flight), kcat-idempotent, kcat (5),
                                    kcat-100 (librdkafka via kcat), kafkajs-idempotent, kafkajs (KafkaJS 2.2.4, 5)
      """;

    /**
     * Collects these options from the command line, one flag at a time, starting from {@link #DEFAULTS}; {@link
     * #build()} makes the immutable options once at the end. Not thread-safe.
     */
    static final class Parser {
        private int s2fRecordsPerSec = DEFAULTS.s2fRecordsPerSec;
        private int s2fProducers = DEFAULTS.s2fProducers;
        private boolean aaControl = DEFAULTS.aaControl;
        private int s1lWindowMs = DEFAULTS.s1lWindowMs;
        private int s1lFollowerFetchMaxBytes = DEFAULTS.s1lFollowerFetchMaxBytes;
        private int s5AddPartitionsRetryMaxMs = DEFAULTS.s5AddPartitionsRetryMaxMs;
        private List<BenchClient> clients = DEFAULTS.clients;
        private int s8RecordsPerSec = DEFAULTS.s8RecordsPerSec;
        private int s8Producers = DEFAULTS.s8Producers;
        private int s8LingerMs = DEFAULTS.s8LingerMs;
        private int s8KpipeLingerMs = DEFAULTS.s8KpipeLingerMs;

        /**
         * Parses one option at {@code args[i]} if it is one of these.
         *
         * @param args the command line
         * @param i index of the flag
         * @return the index of the last argument consumed, or -1 if {@code args[i]} is not one of these options
         * @throws IllegalArgumentException on a bad value (the message names the flag)
         */
        int parse(String[] args, int i) {
            String a = args[i];
            switch (a) {
                case "--s2f-rate" -> s2fRecordsPerSec = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s2f-producers" -> s2fProducers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--no-aa" -> aaControl = false;
                case "--s1l-window-ms" -> s1lWindowMs = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s1l-follower-fetch-max-kib" -> {
                    int kib = Flags.positiveInt(Flags.value(args, ++i, a), a);
                    if (kib > 1024 * 1024) {
                        throw new IllegalArgumentException(a + " at most 1048576 (1 GiB): " + kib);
                    }
                    s1lFollowerFetchMaxBytes = kib * 1024;
                }
                case "--s5-add-partitions-retry-max-ms" ->
                    s5AddPartitionsRetryMaxMs = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--client" -> clients = BenchClient.parse(Flags.value(args, ++i, a));
                case "--s8-rate" -> s8RecordsPerSec = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s8-producers" -> s8Producers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s8-linger-ms" -> s8LingerMs = Flags.nonNegativeInt(Flags.value(args, ++i, a), a);
                case "--s8-kpipe-linger-ms" -> s8KpipeLingerMs = Flags.nonNegativeInt(Flags.value(args, ++i, a), a);
                default -> {
                    return -1;
                }
            }
            return i;
        }

        /** @return the options parsed so far (the defaults for flags not given) */
        MeasureOptions build() {
            return new MeasureOptions(
                    s2fRecordsPerSec,
                    s2fProducers,
                    aaControl,
                    s1lWindowMs,
                    s1lFollowerFetchMaxBytes,
                    s5AddPartitionsRetryMaxMs,
                    clients,
                    s8RecordsPerSec,
                    s8Producers,
                    s8LingerMs,
                    s8KpipeLingerMs);
        }
    }
}
