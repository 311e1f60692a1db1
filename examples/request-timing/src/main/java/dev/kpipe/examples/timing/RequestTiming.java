// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.timing;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.utils.Time;

/**
 * A {@link NetworkEventListener} that only observes: for each request of the connections it sees, the time from its
 * read ({@code onRequestRead}) to its order-defining step ({@code onRequestDispatched}), and from there to its response
 * written ({@code onResponseWritten}), per API, as Kafka metrics ({@link TimingMetrics}). It changes nothing: every
 * answer is the event's default (a request stays {@link Admission#CLASSIC}), so it runs as a broker's only listener or
 * as an observer beside a deciding one (kpipe's {@code kpipe.spi.observer.classes}).
 *
 * <p>Settings, from the broker's configuration ({@link Configurable}):
 *
 * <ul>
 *   <li>{@value #MAX_TRACKED}: requests timed at once, broker-wide, 16 to 2^24; default {@value #DEFAULT_MAX_TRACKED}
 *       (about 12 bytes each, allocated at {@code configure}). A request that finds no free slot among the 16 its
 *       identity hash points to is counted {@code untracked-total}: keep it well above the requests in flight.
 *   <li>{@value #ABANDON_MS}: the age, ms, after which a request read and never completed (its connection closed before
 *       the broker answered) may lose its slot to a new request; default {@value #DEFAULT_ABANDON_MS}.
 * </ul>
 *
 * <p>Cost on the request path: three events, each a clock read, a probe of a preallocated table (an identity hash and
 * one compare-and-set) and, at dispatch and at write, one record into a synchronized Kafka sensor of the request's API.
 * Nothing is allocated per request; a sensor is made at an API's first request.
 *
 * <p>Threads: {@code onRequestRead}, {@code onResponseWritten} on the processors' network threads; {@code
 * onRequestDispatched} on a request handler thread (or the thread completing a deferred step); {@code configure} and
 * {@code close} on the broker's start-up and shutdown threads. It never calls an action of the processor, and never
 * throws from an event. Thread-safe.
 *
 * <p>On Kafka 4.1 and later, {@link MonitoredRequestTiming} registers the same metrics through the broker's plugin
 * metrics (KIP-877) instead; this class names no type of KIP-877, so it loads on 3.8 to 4.0 as well.
 *
 * @param <Q> the broker's request type
 * @param <S> the broker's response type
 */
public class RequestTiming<Q, S> implements NetworkEventListener<Q, S> {

    /** Requests timed at once. */
    public static final String MAX_TRACKED = "request.timing.max.tracked";
    /** Its default. */
    public static final int DEFAULT_MAX_TRACKED = 65_536;
    /** Age after which an uncompleted request's slot may be taken, ms. */
    public static final String ABANDON_MS = "request.timing.abandon.ms";
    /** Its default: 10 minutes, far beyond any request's timeout. */
    public static final long DEFAULT_ABANDON_MS = 600_000;

    private final Time time;
    private final List<MetricsReporter> reporters;
    private volatile InFlightTable table;
    private volatile TimingMetrics metrics;

    /** For the broker: Kafka's system clock, metrics reported to the platform MBean server. */
    public RequestTiming() {
        this(Time.SYSTEM, null);
    }

    /**
     * @param time the clock
     * @param reporters the metrics' reporters, or {@code null} for a {@link JmxReporter}
     */
    RequestTiming(Time time, List<MetricsReporter> reporters) {
        this.time = time;
        this.reporters = reporters;
    }

    /**
     * @param configs the broker's configuration: {@code node.id} (else {@code broker.id}) and this listener's settings;
     *     a second call starts afresh (the metrics of the first are removed)
     * @throws ConfigException for a setting out of range
     */
    @Override
    public void configure(Map<String, ?> configs) {
        long max = number(configs, MAX_TRACKED, DEFAULT_MAX_TRACKED, 16, 1 << 24);
        long abandonMs = number(configs, ABANDON_MS, DEFAULT_ABANDON_MS, 1, Long.MAX_VALUE / 1_000_000);
        Object node = configs.containsKey("node.id") ? configs.get("node.id") : configs.get("broker.id");
        table = new InFlightTable((int) max, time.nanoseconds(), TimeUnit.MILLISECONDS.toNanos(abandonMs));
        install(newMetrics(node == null ? "unknown" : node.toString()));
    }

    /**
     * @param broker the broker's node id
     * @return the metrics {@link #configure} installs: here in a {@link Metrics} of their own, reported to JMX;
     *     {@code null} for none yet
     */
    TimingMetrics newMetrics(String broker) {
        return new TimingMetrics(broker, reporters != null ? reporters : List.of(new JmxReporter()), time);
    }

    /**
     * Puts metrics in place, closing (unregistering) those they replace. Thread: configuration (start-up).
     *
     * @param m the new metrics, or {@code null} for none
     */
    final void install(TimingMetrics m) {
        TimingMetrics old = metrics;
        metrics = m;
        if (old != null && old != m) { // configured again: the new names replace the old
            old.close();
        }
    }

    /** @return the clock */
    final Time time() {
        return time;
    }

    @Override
    public Admission onRequestRead(
            NetworkProcessor<Q, S> processor, Q request, RequestContext context, AbstractRequest body, int size) {
        InFlightTable t = table;
        if (t != null) {
            int read = t.read(request, time.nanoseconds());
            if (read != 0) {
                count(read > 0);
            }
        }
        return Admission.CLASSIC;
    }

    @Override
    public void onRequestDispatched(Q request, RequestContext context) {
        InFlightTable t = table;
        TimingMetrics m = metrics;
        if (t == null || m == null) {
            return;
        }
        ApiKeys api = context.header.apiKey();
        long nowMs = time.milliseconds();
        long answer = t.dispatched(request, time.nanoseconds());
        if (answer == InFlightTable.UNTRACKED) {
            m.untracked(nowMs);
            return;
        }
        m.readToDispatch(api, InFlightTable.readToDispatch(answer), nowMs);
        if (InFlightTable.writtenFirst(answer)) {
            m.dispatchToWrite(api, 0, nowMs);
            m.writtenFirst(nowMs);
        }
    }

    @Override
    public void onResponseWritten(NetworkProcessor<Q, S> processor, S response) {
        InFlightTable t = table;
        TimingMetrics m = metrics;
        if (t == null || m == null || processor.kindOf(response).isControl()) {
            return;
        }
        Q request = processor.requestOf(response);
        ApiKeys api = processor.contextOf(request).header.apiKey();
        long nowMs = time.milliseconds();
        long toWrite = t.written(request, time.nanoseconds());
        if (toWrite >= 0) {
            m.dispatchToWrite(api, toWrite, nowMs);
        } else if (toWrite == InFlightTable.UNTRACKED) {
            m.untracked(nowMs);
        }
    }

    /** @return the metrics, or {@code null} before {@link #configure} */
    TimingMetrics metrics() {
        return metrics;
    }

    /** @return the table, or {@code null} before {@link #configure} */
    InFlightTable table() {
        return table;
    }

    /** Unregisters the metrics. Thread: the broker's shutdown thread; once. */
    @Override
    public void close() {
        TimingMetrics m = metrics;
        metrics = null;
        table = null;
        if (m != null) {
            m.close();
        }
    }

    private void count(boolean abandoned) {
        TimingMetrics m = metrics;
        if (m != null) {
            if (abandoned) {
                m.abandoned(time.milliseconds());
            } else {
                m.untracked(time.milliseconds());
            }
        }
    }

    private static long number(Map<String, ?> configs, String key, long dflt, long min, long max) {
        Object v = configs.get(key);
        if (v == null) {
            return dflt;
        }
        long n;
        try {
            n = Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key, v, "not a number");
        }
        if (n < min || n > max) {
            throw new ConfigException(key, v, "must be between " + min + " and " + max);
        }
        return n;
    }
}
