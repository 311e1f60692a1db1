// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.cli.Flags;
import java.util.ArrayList;
import java.util.List;

/**
 * Options of the raw-socket scenarios S9 (slow readers beside a good producer) and S10 (connections at scale), parsed
 * beside {@link BenchOptions}. Immutable.
 *
 * @param s9SlowReaders S9: raw connections to the leader that write produce requests and never read a response
 * @param s9Active S9: a slow reader the broker stopped reading is replaced by a new connection, so that slow readers
 *     keep writing through the window (the active regime); false: they stall and stay (the stalled regime)
 * @param s9SlowQuotaKib S9: Kafka's {@code producer_byte_rate} quota for the slow readers' client id ({@link
 *     SlowReaders#CLIENT_ID}) on both sides, KiB/s, set before the rounds ({@link SlowReaderQuota}); 0: none
 * @param s9GoodRate S9: records/s the good producer offers ({@link RatePacer}), so that both sides carry the same
 *     work; 0: it sends flat out (kpipe's then does several times stock's)
 * @param s9WindowsMs S9: the follower's {@code replica.fetch.wait.max.ms} values W, ms (one S9 run per W): {@code
 *     --window-ms} if given, else {@link #S9_DEFAULT_WINDOW_MS}
 * @param s10Connections S10: raw connections to the broker, one S10 run per value
 */
record RawOptions(
        int s9SlowReaders,
        boolean s9Active,
        int s9SlowQuotaKib,
        int s9GoodRate,
        List<Integer> s9WindowsMs,
        List<Integer> s10Connections) {

    /** S9's W when {@code --window-ms} is not given: the ordinary regime of fast acks. */
    static final int S9_DEFAULT_WINDOW_MS = 2;

    /** The defaults: 8 slow readers that stall, a good producer flat out, W = 2 ms; 1,000 connections. */
    static final RawOptions DEFAULTS = new RawOptions(8, false, 0, 0, List.of(S9_DEFAULT_WINDOW_MS), List.of(1000));

    static final String USAGE = """
        --s9-slow-readers N         S9: raw connections writing ~31 KiB acks=all produce requests to the leader and
                                    never reading a response (default 8); S9's W is 2 ms unless --window-ms is given
        --s9-active                 S9: a slow reader the broker stops reading reconnects, so slow readers keep
                                    writing through the window (default: they stall and stay)
        --s9-slow-quota-kib N       S9: Kafka's producer_byte_rate quota, N KiB/s, for the slow readers' client id on
                                    both sides (Admin API, before the rounds); default: no quota
        --s9-good-rate N            S9: the good producer offers N records/s (1 KiB) on both sides, so that both
                                    carry the same work; default: flat out
        --s10-connections N,M       S10: raw connections to the broker, one run per value (default 1000; e.g.
                                    1000,5000): one in ten produces 1 request/s (acks=1), the rest idle after one
      """;

    /** Collects these options one flag at a time from {@link #DEFAULTS}. Not thread-safe. */
    static final class Parser {
        private int s9SlowReaders = DEFAULTS.s9SlowReaders;
        private boolean s9Active = DEFAULTS.s9Active;
        private int s9SlowQuotaKib = DEFAULTS.s9SlowQuotaKib;
        private int s9GoodRate = DEFAULTS.s9GoodRate;
        private List<Integer> s10Connections = DEFAULTS.s10Connections;

        /**
         * @param args the command line
         * @param i index of the flag
         * @return the index of the last argument consumed, or -1 if {@code args[i]} is not one of these options
         * @throws IllegalArgumentException on a bad value (the message names the flag)
         */
        int parse(String[] args, int i) {
            String a = args[i];
            switch (a) {
                case "--s9-slow-readers" -> s9SlowReaders = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s9-active" -> s9Active = true;
                case "--s9-slow-quota-kib" -> s9SlowQuotaKib = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s9-good-rate" -> s9GoodRate = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s10-connections" -> {
                    List<Integer> l = new ArrayList<>();
                    for (String s : Flags.value(args, ++i, a).split(",")) {
                        l.add(Flags.positiveInt(s.trim(), a));
                    }
                    s10Connections = List.copyOf(l);
                }
                default -> {
                    return -1;
                }
            }
            return i;
        }

        /**
         * @param windowsMs {@code --window-ms} as given, or null if it was not
         * @return the options parsed so far
         */
        RawOptions build(List<Integer> windowsMs) {
            return new RawOptions(
                    s9SlowReaders,
                    s9Active,
                    s9SlowQuotaKib,
                    s9GoodRate,
                    windowsMs != null ? windowsMs : List.of(S9_DEFAULT_WINDOW_MS),
                    s10Connections);
        }
    }
}
