// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

/**
 * The clock kpipe reads: a monotonic time in nanoseconds, as {@link System#nanoTime} (only differences between two
 * readings mean anything). Passed in, never read from {@link System} directly, so that a test can simulate time: the
 * broker binding passes {@link #SYSTEM}, the fake broker its own clock, which it advances as a step of its own. Here,
 * in the module every other kpipe module depends on, so that the byte budget and the plugin share one clock.
 *
 * <p>Thread: implementations are called on network threads and, for the connection dump, on a JMX thread; they must
 * be thread-safe, cheap and must not throw.
 */
@FunctionalInterface
public interface Ticker {

    /** The real clock: {@link System#nanoTime}. The only place kpipe reads it. */
    Ticker SYSTEM = System::nanoTime;

    /** @return the current time, ns (monotonic; an arbitrary origin) */
    long nanos();
}
