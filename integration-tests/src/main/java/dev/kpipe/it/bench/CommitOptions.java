// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.cli.Flags;

/**
 * Options of the offset-commit scenarios S6 and S7 ({@link CommitScenario}), parsed beside {@link BenchOptions}.
 * Immutable.
 *
 * @param s6RecordsPerSec S6: records/s the feeding producer offers to the consumer's partition (100 B records)
 * @param s7InputRecords S7: records written to the Streams application's input topic before the rounds (100 B each;
 *     every round's application reads it from the start under a new {@code application.id})
 * @param excl S6 and S7: run the third side, kpipe with {@code kpipe.offset.commits.pipelined=false}
 */
record CommitOptions(int s6RecordsPerSec, int s7InputRecords, boolean excl) {

    /** The defaults: 2,000 records/s into S6's partition, 3,000,000 input records for S7, kpipe-excl on. */
    static final CommitOptions DEFAULTS = new CommitOptions(2_000, 3_000_000, true);

    static final String USAGE = """
        --s6-rate N                 S6: records/s fed to the committing consumer's partition (default 2000)
        --s7-input-records N        S7: records in the Streams application's input topic (default 3000000)
        --no-excl                   S6/S7: no kpipe-excl side (kpipe with kpipe.offset.commits.pipelined=false)
      """;

    /** Collects these options one flag at a time from {@link #DEFAULTS}. Not thread-safe. */
    static final class Parser {
        private int s6RecordsPerSec = DEFAULTS.s6RecordsPerSec;
        private int s7InputRecords = DEFAULTS.s7InputRecords;
        private boolean excl = DEFAULTS.excl;

        /**
         * @param args the command line
         * @param i index of the flag
         * @return the index of the last argument consumed, or -1 if {@code args[i]} is not one of these options
         * @throws IllegalArgumentException on a bad value (the message names the flag)
         */
        int parse(String[] args, int i) {
            String a = args[i];
            switch (a) {
                case "--s6-rate" -> s6RecordsPerSec = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--s7-input-records" -> s7InputRecords = Flags.positiveInt(Flags.value(args, ++i, a), a);
                case "--no-excl" -> excl = false;
                default -> {
                    return -1;
                }
            }
            return i;
        }

        /** @return the options parsed so far */
        CommitOptions build() {
            return new CommitOptions(s6RecordsPerSec, s7InputRecords, excl);
        }
    }
}
