// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A CPU list in the syntax of {@code taskset -c} and of Linux's {@code /sys/devices/system/cpu/online} ({@code 1},
 * {@code 0,2-3}): CPU numbers and inclusive ranges, comma separated. Immutable.
 *
 * @param text the list as given
 * @param cpus the CPUs it names, ascending
 */
record CpuList(String text, SortedSet<Integer> cpus) {

    /**
     * @param v the list
     * @param flag the option it came from, named in the error
     * @return the parsed list
     * @throws IllegalArgumentException if {@code v} is not a CPU list (the message names {@code flag})
     */
    static CpuList parse(String v, String flag) {
        TreeSet<Integer> cpus = new TreeSet<>();
        try {
            for (String part : v.trim().split(",", -1)) {
                int dash = part.indexOf('-');
                int from = Integer.parseInt(
                        dash < 0 ? part.trim() : part.substring(0, dash).trim());
                int to = dash < 0
                        ? from
                        : Integer.parseInt(part.substring(dash + 1).trim());
                if (from < 0 || to < from) {
                    throw new NumberFormatException(part);
                }
                for (int c = from; c <= to; c++) {
                    cpus.add(c);
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    flag + " takes a CPU list as taskset -c does (e.g. 1 or 0,2-3): " + v, e);
        }
        return new CpuList(v.trim(), Collections.unmodifiableSortedSet(cpus));
    }

    /**
     * @param online the CPUs that exist
     * @param flag the option this list came from, named in the error
     * @throws IllegalArgumentException naming {@code flag} and the first CPU of this list that {@code online} lacks
     */
    void checkExists(CpuList online, String flag) {
        for (int c : cpus) {
            if (!online.cpus.contains(c)) {
                throw new IllegalArgumentException(
                        flag + " " + text + ": CPU " + c + " does not exist (online CPUs: " + online.text + ")");
            }
        }
    }

    /** @return the list in canonical form, every CPU named: {@code 0,1,3} */
    String canonical() {
        return cpus.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    @Override
    public String toString() {
        return text;
    }
}
