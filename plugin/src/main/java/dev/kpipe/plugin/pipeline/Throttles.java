// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Ticker;
import dev.kpipe.spi.NetworkProcessor;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;

/**
 * Client quota throttle windows (KIP-219) on the connections kpipe owns, counted: Kafka's
 * {@code KafkaChannel.handleChannelMuteEvent} sees {@code THROTTLE_STARTED} and {@code THROTTLE_ENDED} for a
 * connection whose response carries a throttle time; kpipe keeps them per connection ({@link ThrottleWindows}, a mute
 * reason of its own) and counts {@code throttled-connections}, {@code throttle-window-total} and
 * {@code throttle-time-ms-total}.
 *
 * <p>Invariants: {@code throttled-connections} counts exactly the connections kpipe owns with at least one window
 * open; each connection's throttled time is added once per stretch with a window open (overlapping windows count
 * once), when its last window closes or when kpipe lets go of the connection ({@link #forgotten}). The clients seen
 * throttled are kept in {@link ThrottledClients}.
 *
 * <p>Thread: the connection's network thread.
 */
final class Throttles {

    private final PipelineStats stats;
    private final Ticker ticker;
    /** The clients seen throttled: a connection of one upgraded while it is marked is on probation. */
    private final ThrottledClients clients;

    /**
     * @param stats where to count
     * @param ticker the clock of the throttled time
     */
    Throttles(PipelineStats stats, Ticker ticker) {
        this.stats = stats;
        this.ticker = ticker;
        this.clients = new ThrottledClients(ticker);
    }

    /** @return the throttled clients (for the tests of this package) */
    ThrottledClients clients() {
        return clients;
    }

    /** @param conn a connection a throttle window opened on ({@code THROTTLE_STARTED}) */
    void started(ConnectionPipeline<?, ?> conn) {
        if (conn.throttleStarted(ticker.nanos())) {
            stats.throttledConnections.incrementAndGet();
            stats.waitStarted(WaitReason.THROTTLED);
            ConnectionIdentity id = conn.identity();
            ThrottledClients.Entry e = id == null ? null : clients.windowOpened(id.client());
            if (e != null) {
                conn.probation().seen(e, false);
            }
        }
        stats.throttleWindows.increment();
    }

    /** @param conn a connection a throttle window closed on ({@code THROTTLE_ENDED}) */
    void ended(ConnectionPipeline<?, ?> conn) {
        account(conn, conn.throttleEnded(ticker.nanos()));
    }

    /**
     * kpipe let go of a connection (handed back or closed): its open windows end for kpipe; its client stays marked.
     *
     * @param throttledFor how long it had been throttled, ns, or negative if no window was open
     */
    void forgotten(ConnectionPipeline<?, ?> conn, long throttledFor) {
        account(conn, throttledFor);
    }

    /**
     * A connection is upgraded by its first request, of {@code ctx}: on probation if its client is marked (one
     * volatile read when none is).
     */
    void upgraded(ConnectionPipeline<?, ?> conn, RequestContext ctx) {
        ThrottledClients.Entry e = clients.probation(ctx.principal, ctx.clientId());
        if (e != null) {
            conn.probation().seen(e, true);
        }
    }

    /**
     * A response of {@code conn} was written: a PRODUCE's with no window open says its client is under its produce
     * quota (Kafka's byte-rate quota throttles PRODUCE responses only; other APIs carry the request quota's alone).
     */
    <Q, S> void responseWritten(ConnectionPipeline<Q, S> conn, NetworkProcessor<Q, S> processor, S response) {
        ThrottledClients.Entry e = entryOf(conn);
        if (e != null && !conn.throttled() && isProduce(processor, response)) {
            clients.responseUnthrottled(e);
        }
    }

    private static <Q, S> boolean isProduce(NetworkProcessor<Q, S> processor, S response) {
        Q request = processor.requestOf(response);
        return request != null && processor.contextOf(request).header.apiKey() == ApiKeys.PRODUCE;
    }

    /** @param throttledFor the time the connection was throttled, ns, or negative if it still is (or never was) */
    private void account(ConnectionPipeline<?, ?> conn, long throttledFor) {
        if (throttledFor >= 0) {
            stats.throttledConnections.decrementAndGet();
            stats.throttleTimeNanos.add(throttledFor);
            ThrottledClients.Entry e = entryOf(conn);
            if (e != null) {
                clients.windowClosed(e);
            }
        }
    }

    /** @return the entry of {@code conn}'s client if it was seen throttled, else {@code null} */
    private static ThrottledClients.Entry entryOf(ConnectionPipeline<?, ?> conn) {
        ClientProbation p = conn.client();
        return p == null ? null : p.entry();
    }
}
