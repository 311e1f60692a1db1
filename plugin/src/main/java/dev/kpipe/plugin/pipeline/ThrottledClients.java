// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Ticker;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * The <b>throttled clients</b> of one broker: those whose connections kpipe owns saw a client quota throttle window
 * (KIP-219), keyed as Kafka's quota entity (user, client-id) is: the principal and client id of the connection's
 * {@link RequestContext}. A client is <b>marked</b> when a window opens on one of its connections, and stays marked
 * while a window is open on one of them, or after one closed (or was handed back) with a window open, until a
 * PRODUCE response is written on one of its connections with no window open (Kafka throttles every produce response
 * of a client over its produce quota). A connection upgraded while its client is marked is on probation: one request in flight at a time, as
 * stock ({@link WaitReason#CLIENT_THROTTLED}). Unmarked clients are removed.
 *
 * <p>Bound: at most {@link #MAX_CLIENTS} entries; a full table first drops entries with no window open for
 * {@link #EXPIRY_NANOS}, and then marks no new client (its connections keep their own windows, as before). An entry
 * with no window open for that long is not marked any more (a client that never came back).
 *
 * <p>Thread: any network thread; mutations and lookups under this object's lock, which is taken only on throttle
 * events, on responses of connections of a client seen throttled, and at an upgrade while a client is marked
 * ({@link #anyMarked()} is one volatile read otherwise).
 */
final class ThrottledClients {

    /** The most clients marked at once. */
    static final int MAX_CLIENTS = 10_000;
    /** How long a client with no window open stays marked without a response clearing it: 60 s. */
    static final long EXPIRY_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** A quota entity as Kafka's {@code ClientQuotaManager} keys it: (user principal, client id). */
    record Client(KafkaPrincipal principal, String clientId) {}

    /** One marked client; {@link #marked()} is read by its connections' network threads. */
    static final class Entry {
        private final Client client;
        /** Its connections with a window open (under the table's lock). */
        private int windowed;
        /** When its last window closed (the table's clock, ns). */
        private long idleSinceNanos;

        private volatile boolean marked = true;

        Entry(Client client) {
            this.client = client;
        }

        /** @return true while the client is marked; thread: any */
        boolean marked() {
            return marked;
        }
    }

    private final Ticker ticker;
    private final Map<Client, Entry> table = new HashMap<>();
    private volatile int size;
    /** When {@link #probation} last dropped expired entries (the table's clock, ns). */
    private long sweptNanos;

    /** @param ticker the clock of {@link #EXPIRY_NANOS} */
    ThrottledClients(Ticker ticker) {
        this.ticker = ticker;
    }

    /** @return true if any client is marked: one volatile read */
    boolean anyMarked() {
        return size > 0;
    }

    /** @return the number of marked clients */
    int size() {
        return size;
    }

    /**
     * The first window opened on a connection of {@code client}: it is marked.
     *
     * @return its entry, or {@code null} if the table is full
     */
    synchronized Entry windowOpened(Client client) {
        long now = ticker.nanos();
        Entry e = live(client, now);
        if (e == null) {
            if (table.size() >= MAX_CLIENTS) {
                table.values().removeIf(x -> expired(x, now));
                if (table.size() >= MAX_CLIENTS) {
                    size = table.size();
                    return null;
                }
            }
            e = new Entry(client);
            table.put(client, e);
        }
        e.windowed++;
        size = table.size();
        return e;
    }

    /** The last window of one of its connections closed, or the connection left with one open: still marked. */
    synchronized void windowClosed(Entry e) {
        if (e.marked && e.windowed > 0 && --e.windowed == 0) {
            e.idleSinceNanos = ticker.nanos();
        }
    }

    /** A response was written with no window open on a connection of {@code e}'s client: unmarked unless windowed. */
    synchronized void responseUnthrottled(Entry e) {
        if (e.marked && e.windowed == 0) {
            unmark(e);
        }
    }

    /**
     * @param principal a connection's principal
     * @param clientId its client id
     * @return the entry of that client if it is marked: a connection upgraded now is on probation. Expired
     *     entries are dropped here too, at most once per {@link #EXPIRY_NANOS}, so that clients that never came back
     *     do not keep {@link #anyMarked()} true.
     */
    Entry probation(KafkaPrincipal principal, String clientId) {
        if (!anyMarked()) {
            return null;
        }
        synchronized (this) {
            long now = ticker.nanos();
            if (now - sweptNanos >= EXPIRY_NANOS) {
                sweptNanos = now;
                table.values().removeIf(x -> expired(x, now));
                size = table.size();
            }
            return live(new Client(principal, clientId), now);
        }
    }

    private Entry live(Client client, long now) {
        Entry e = table.get(client);
        if (e != null && expired(e, now)) {
            unmark(e);
            return null;
        }
        return e;
    }

    private static boolean expired(Entry e, long now) {
        boolean expired = e.windowed == 0 && now - e.idleSinceNanos >= EXPIRY_NANOS;
        if (expired) {
            e.marked = false;
        }
        return expired;
    }

    private void unmark(Entry e) {
        e.marked = false;
        table.remove(e.client, e);
        size = table.size();
    }
}
