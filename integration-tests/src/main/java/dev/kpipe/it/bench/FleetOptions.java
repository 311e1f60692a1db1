// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.cli.Flags;
import java.util.List;

/**
 * Options of the mixed-fleet scenario S11 (issue #33 item 3), parsed beside {@link BenchOptions}: producers whose
 * topic kpipe leaves alone ({@code kpipe.topics.exclude}) beside a few pipelined ones, each group at a fixed offered
 * load. Immutable.
 *
 * @param excludedProducers producers on the excluded topic (one partition and one connection each)
 * @param excludedRecordsPerSec records/s offered by the excluded producers together
 * @param pipelinedProducers producers on the pipelined topic (one partition and one connection each)
 * @param pipelinedRecordsPerSec records/s offered by the pipelined producers together
 * @param windowsMs the follower's {@code replica.fetch.wait.max.ms} values W, ms (one S11 run per W): {@code
 *     --window-ms} if given, else {@link #DEFAULT_WINDOW_MS}
 */
record FleetOptions(
        int excludedProducers,
        int excludedRecordsPerSec,
        int pipelinedProducers,
        int pipelinedRecordsPerSec,
        List<Integer> windowsMs) {

    /** S11's W when {@code --window-ms} is not given: the ordinary regime of fast acks. */
    static final int DEFAULT_WINDOW_MS = 2;

    /** The defaults: 50 excluded producers offering 5,000 records/s beside 5 pipelined ones offering 5,000, W = 2 ms. */
    static final FleetOptions DEFAULTS = new FleetOptions(50, 5_000, 5, 5_000, List.of(DEFAULT_WINDOW_MS));

    static final String USAGE = """
        --s11-excluded-producers N  S11: producers on the topic kpipe.topics.exclude names (default 50)
        --s11-excluded-rate N       S11: records/s the excluded producers offer in all (default 5000)
        --s11-pipelined-producers N S11: pipelined producers beside them (default 5)
        --s11-pipelined-rate N      S11: records/s the pipelined producers offer in all (default 5000);
                                    S11's W is 2 ms unless --window-ms is given
      """;

    /** Collects these options one flag at a time from {@link #DEFAULTS}. Not thread-safe. */
    static final class Parser {
        private int excludedProducers = DEFAULTS.excludedProducers;
        private int excludedRecordsPerSec = DEFAULTS.excludedRecordsPerSec;
        private int pipelinedProducers = DEFAULTS.pipelinedProducers;
        private int pipelinedRecordsPerSec = DEFAULTS.pipelinedRecordsPerSec;

        /**
         * @param args the command line
         * @param i index of the flag
         * @return the index of the last argument consumed, or -1 if {@code args[i]} is not one of these options
         * @throws IllegalArgumentException on a bad value (the message names the flag)
         */
        int parse(String[] args, int i) {
            String a = args[i];
            switch (a) {
                case "--s11-excluded-producers" -> excludedProducers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s11-excluded-rate" -> excludedRecordsPerSec = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s11-pipelined-producers" ->
                    pipelinedProducers = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s11-pipelined-rate" -> pipelinedRecordsPerSec = Flags.positiveInt(Flags.value(args, ++i, a), a);
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
        FleetOptions build(List<Integer> windowsMs) {
            return new FleetOptions(
                    excludedProducers,
                    excludedRecordsPerSec,
                    pipelinedProducers,
                    pipelinedRecordsPerSec,
                    windowsMs != null ? windowsMs : List.of(DEFAULT_WINDOW_MS));
        }
    }
}
