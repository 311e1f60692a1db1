// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.cli;

/**
 * The values of command-line flags ({@code --flag value}), for the option parsers of the benchmark and the soak. Every
 * failure is an {@link IllegalArgumentException} whose message names the flag, for the parser to print above its
 * usage. Stateless and thread-safe.
 */
public final class Flags {
    private Flags() {}

    /**
     * @param args the command line
     * @param i the index of the flag's value (one after the flag)
     * @param flag the flag, for the message
     * @return {@code args[i]}
     * @throws IllegalArgumentException "{@code <flag> needs a value}" if the command line ends before it
     */
    public static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    /**
     * @param v a flag's value
     * @param flag the flag, for the message
     * @return {@code v} as an {@code int} above 0
     * @throws IllegalArgumentException "{@code <flag> needs a number: <v>}" if it is not a decimal {@code int},
     *     "{@code <flag> must be > 0: <v>}" if it is not above 0
     */
    public static int positiveInt(String v, String flag) {
        long n = number(v, flag);
        if (n != (int) n) {
            throw notANumber(v, flag); // what Integer.parseInt says
        }
        return (int) positive(n, v, flag);
    }

    /**
     * @param v a flag's value
     * @param flag the flag, for the message
     * @return {@code v} as a {@code long} above 0
     * @throws IllegalArgumentException "{@code <flag> needs a number: <v>}" if it is not a decimal {@code long},
     *     "{@code <flag> must be > 0: <v>}" if it is not above 0
     */
    public static long positiveLong(String v, String flag) {
        return positive(number(v, flag), v, flag);
    }

    /**
     * @param v a flag's value
     * @param flag the flag, for the message
     * @return {@code v} as an {@code int} of 0 or more
     * @throws IllegalArgumentException "{@code <flag> needs a number: <v>}" if it is not a decimal {@code int},
     *     "{@code <flag> must be >= 0: <v>}" if it is negative
     */
    public static int nonNegativeInt(String v, String flag) {
        long n = number(v, flag);
        if (n != (int) n) {
            throw notANumber(v, flag);
        }
        if (n < 0) {
            throw new IllegalArgumentException(flag + " must be >= 0: " + v);
        }
        return (int) n;
    }

    /**
     * @param v a flag's value
     * @param flag the flag, for the message
     * @return {@code v} as a finite {@code double} above 0 (e.g. a load average, {@code 1.5})
     * @throws IllegalArgumentException "{@code <flag> needs a number: <v>}" if it is not a finite decimal number,
     *     "{@code <flag> must be > 0: <v>}" if it is not above 0
     */
    public static double positiveDouble(String v, String flag) {
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw notANumber(v, flag);
        }
        if (!Double.isFinite(d)) {
            throw notANumber(v, flag);
        }
        if (d <= 0) {
            throw new IllegalArgumentException(flag + " must be > 0: " + v);
        }
        return d;
    }

    private static long number(String v, String flag) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw notANumber(v, flag);
        }
    }

    private static IllegalArgumentException notANumber(String v, String flag) {
        return new IllegalArgumentException(flag + " needs a number: " + v);
    }

    private static long positive(long n, String v, String flag) {
        if (n <= 0) {
            throw new IllegalArgumentException(flag + " must be > 0: " + v);
        }
        return n;
    }
}
