// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.cli.Flags;

/**
 * Options of where the sides run and what runs beside kpipe, parsed beside {@link BenchOptions}: CPU pinning
 * ({@link Pinning}) and an SPI observer on the kpipe side ({@link KpipeObserver}). Immutable.
 *
 * @param brokerCpus {@code --broker-cpus}: every broker JVM started through {@code taskset -c}, or null
 * @param clientCpus {@code --client-cpus}: this JVM (its client threads) and its client processes pinned, or null
 * @param kpipeObserver {@code --kpipe-observer}: the observer installed on the kpipe side's brokers, or null
 * @param settleLoad {@code --settle-load}: before every round, wait until the machine's 1-minute load average is below
 *     this or has stopped falling ({@link LoadAverage#settle}); 0: start every round at once
 * @param settleMaxS {@code --settle-max-s}: the longest wait for it before a round, s; the round then starts anyway,
 *     its load printed beside it
 */
record SideOptions(
        CpuList brokerCpus, CpuList clientCpus, KpipeObserver kpipeObserver, double settleLoad, int settleMaxS) {

    /** No pinning, no observer, no waiting for the load to settle (at most 300 s once asked). */
    static final SideOptions DEFAULTS = new SideOptions(null, null, null, 0, 300);

    static final String USAGE = """
        --broker-cpus LIST          every broker JVM started through taskset -c LIST (e.g. 1; taskset's syntax, e.g.
                                    0,2-3); default: not pinned
        --client-cpus LIST          the runner's JVM (its producer threads) and its client processes pinned to LIST
                                    with taskset (e.g. 0); brokers then keep the runner's CPUs from before unless
                                    --broker-cpus is given; default: not pinned
        --kpipe-observer request-timing   the kpipe side's brokers also run examples/request-timing's SPI observer
                                    (its jar in libs/, kpipe.spi.observer.classes); the stock side unchanged
        --settle-load L             before every round, wait until the 1-minute load average is below L (e.g. 1.5),
                                    or has stopped falling (the clusters' own idle level): a round then starts on a
                                    settled machine, not on the last round's load; default 0, no wait
        --settle-max-s N            the longest such wait, s (default 300); the round then starts anyway
      """;

    /** Collects these options one flag at a time from {@link #DEFAULTS}. Not thread-safe. */
    static final class Parser {
        private CpuList brokerCpus;
        private CpuList clientCpus;
        private KpipeObserver kpipeObserver;
        private double settleLoad = DEFAULTS.settleLoad;
        private int settleMaxS = DEFAULTS.settleMaxS;

        /**
         * @param args the command line
         * @param i index of the flag
         * @return the index of the last argument consumed, or -1 if {@code args[i]} is not one of these options
         * @throws IllegalArgumentException on a bad value (the message names the flag)
         */
        int parse(String[] args, int i) {
            String a = args[i];
            switch (a) {
                case "--broker-cpus" -> brokerCpus = CpuList.parse(Flags.value(args, ++i, a), a);
                case "--client-cpus" -> clientCpus = CpuList.parse(Flags.value(args, ++i, a), a);
                case "--kpipe-observer" -> kpipeObserver = KpipeObserver.of(Flags.value(args, ++i, a), a);
                case "--settle-load" -> settleLoad = Flags.positiveDouble(Flags.value(args, ++i, a), a);
                case "--settle-max-s" -> settleMaxS = Flags.positiveInt(Flags.value(args, ++i, a), a);
                default -> {
                    return -1;
                }
            }
            return i;
        }

        /** @return the options parsed so far */
        SideOptions build() {
            return new SideOptions(brokerCpus, clientCpus, kpipeObserver, settleLoad, settleMaxS);
        }
    }
}
