// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;

/**
 * Logs one kind of fault that kpipe caught on a broker thread (a kpipe bug or a broker state it did not expect) and
 * that could repeat for every request: the first occurrence at WARN, so that an operator sees it once and can report
 * it, every later one at DEBUG, so that a repeating fault cannot flood the broker log. Each occurrence is counted in
 * the {@code plugin-fault-total} metric as well (by the caller). Like Kafka's own network layer, which logs a
 * per-connection problem at DEBUG and counts it in a metric, kpipe never logs above DEBUG per request.
 *
 * <p>Thread-safe: network and request handler threads call it; exactly one call logs at WARN.
 */
final class FaultLog {
    private static final String FURTHER = " (further occurrences are logged at DEBUG and counted in the kpipe-metrics"
            + " metric plugin-fault-total)";

    private final Logger log;
    private final AtomicBoolean warned = new AtomicBoolean();

    /** @param log the logger to write to */
    FaultLog(Logger log) {
        this.log = log;
    }

    /**
     * Logs one occurrence.
     *
     * @param format an SLF4J message format
     * @param args its arguments; a last {@link Throwable} is logged as the cause, as SLF4J does
     */
    void fault(String format, Object... args) {
        if (warned.compareAndSet(false, true)) {
            log.warn(format + FURTHER, args);
        } else if (log.isDebugEnabled()) {
            log.debug(format, args);
        }
    }
}
