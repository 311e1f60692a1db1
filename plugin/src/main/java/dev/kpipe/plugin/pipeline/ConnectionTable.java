// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections kpipe owns, by Kafka's connection id (unique among a broker's open connections), with the gauge and
 * counter that move with it: {@code pipelined-connections} counts exactly the entries, and every entry added is an
 * upgrade ({@code upgrade-total}).
 *
 * <p>Invariant: a connection is in the table exactly while kpipe owns it ({@link ConnectionState#owned()}): it is added
 * when kpipe takes it over and removed once, when it is let go ({@code Ownership.release}).
 *
 * <p>Thread: {@link #add} and {@link #remove} on the connection's network thread; the look-ups on any thread (handler
 * threads signal dispatches, JMX threads read the dump).
 */
final class ConnectionTable<Q, S> {

    private final ConcurrentHashMap<String, ConnectionPipeline<Q, S>> byId = new ConcurrentHashMap<>();
    private final PipelineStats stats;

    /** @param stats the gauge and counter that move with the table */
    ConnectionTable(PipelineStats stats) {
        this.stats = stats;
        stats.connectionTable(byId::size);
    }

    /**
     * @param connectionId Kafka's connection id
     * @return the connection kpipe owns with that id, or {@code null}
     */
    ConnectionPipeline<Q, S> get(String connectionId) {
        return byId.get(connectionId);
    }

    /** @param conn a connection kpipe takes over now (upgraded, or taken over after a deferred upgrade) */
    void add(ConnectionPipeline<Q, S> conn) {
        byId.put(conn.id(), conn);
        stats.pipelinedConnections.incrementAndGet();
        stats.upgrades.increment();
    }

    /**
     * @param conn a connection kpipe lets go of
     * @return true if it was in the table (removed now); false if it was not (nothing changed)
     */
    boolean remove(ConnectionPipeline<Q, S> conn) {
        if (!byId.remove(conn.id(), conn)) {
            return false;
        }
        stats.pipelinedConnections.decrementAndGet();
        return true;
    }

    /** @return true if kpipe owns no connection */
    boolean isEmpty() {
        return byId.isEmpty();
    }

    /** @return the table as an unmodifiable, weakly consistent map view, by connection id; for tests */
    Map<String, ConnectionPipeline<Q, S>> asMap() {
        return Collections.unmodifiableMap(byId);
    }

    /** @return the connections kpipe owns, a weakly consistent view */
    Collection<ConnectionPipeline<Q, S>> values() {
        return byId.values();
    }
}
