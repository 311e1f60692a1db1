package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.RequestClass;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkProcessor;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a request read, or a SASL re-authentication (KIP-368), does to its connection: classification (a throwable of
 * the policy makes the request exclusive, {@code classification-fallback-total}); the upgrade of a classic connection
 * by a pipelined request (deferred when the byte budget has no room for it); a pipelined request appended to its
 * connection's slots; an exclusive request or a re-authentication held for a drain (PIPELINED to
 * DRAINING_EXCLUSIVE or DRAINING_REAUTHENTICATION), or handed to Kafka at once when nothing is outstanding.
 *
 * <p>Invariants: at most one request per connection is in the dispatch phase ({@code awaitingDispatch}); a request
 * is appended only to a PIPELINED connection; a held request or re-authentication is counted in
 * {@code held-requests} exactly while {@link ConnectionPipeline#held} refers to it. A read on a connection kpipe keeps
 * muted is a fault (counted) and an illegal move unless PIPELINED. Thread: the connection's network thread; nothing
 * thrown leaves ({@code plugin-fault-total}).
 */
final class Admissions {

    private static final Logger LOG = LoggerFactory.getLogger(PipelineCoordinator.class);
    /** Faults that could repeat per request: WARN once each, then DEBUG (see {@link FaultLog}). */
    private final FaultLog readWhileMuted = new FaultLog(LOG);

    private final FaultLog admitFailed = new FaultLog(LOG);
    private final FaultLog reauthenticationWhileMuted = new FaultLog(LOG);

    private final RequestClassifier classifier;
    private final Map<String, ConnectionPipeline> connections;
    private final PipelineStats stats;
    private final Ticker ticker;
    private final Reservations reservations;
    private final QuietPeriod quiet;
    private final Drains.Release release;
    private final BooleanSupplier enabled;

    Admissions(
            RequestClassifier classifier,
            Map<String, ConnectionPipeline> connections,
            PipelineStats stats,
            Ticker ticker,
            Reservations reservations,
            QuietPeriod quiet,
            Drains.Release release,
            BooleanSupplier enabled) {
        this.classifier = classifier;
        this.connections = connections;
        this.stats = stats;
        this.ticker = ticker;
        this.reservations = reservations;
        this.quiet = quiet;
        this.release = release;
        this.enabled = enabled;
    }

    /**
     * A request was read ({@code onRequestReceived}): classifies it, upgrades a classic connection, appends it to a
     * pipelined one or holds it for a drain.
     *
     * @return how the broker must treat it
     */
    Admission received(
            NetworkProcessor processor, Object request, RequestContext context, AbstractRequest body, int sizeInBytes) {
        String id = context.connectionId;
        ConnectionPipeline conn = connections.get(id);
        RequestClass cls;
        if (!enabled.getAsBoolean()) {
            if (conn == null) {
                return Admission.CLASSIC;
            }
            // Read before its connection's drain started: handled like an exclusive request (drain, downgrade).
            cls = RequestClass.EXCLUSIVE;
        } else {
            try {
                cls = classifier.classify(context.header.apiKey(), body);
            } catch (Throwable e) {
                stats.classificationFallbacks.increment();
                LOG.debug("kpipe: classification failed for {} on {}; handled as exclusive", context.header, id, e);
                cls = RequestClass.EXCLUSIVE;
            }
        }
        boolean upgrade = conn == null;
        try {
            if (conn == null) {
                if (cls != RequestClass.PIPELINED) {
                    return Admission.CLASSIC;
                }
                if (!reservations.tryAdmitRead(sizeInBytes)) {
                    // No room in the budget for the request already read: it stays classic (Kafka's
                    // own one-at-a-time bound applies). When its response is written, kpipe takes the
                    // connection over, muted, and it waits for budget in line with the others.
                    stats.upgradesDeferred.increment();
                    ProcessorPipelines.of(processor).upgradesDeferred.put(id, sizeInBytes);
                    return Admission.CLASSIC;
                }
                conn = new ConnectionPipeline(id, ProcessorPipelines.of(processor), stats, ticker.nanos());
                conn.context = context;
                connections.put(id, conn);
                stats.pipelinedConnections.incrementAndGet();
                stats.upgrades.increment();
            } else if (conn.awaitingDispatch != null || conn.state() != ConnectionState.PIPELINED) {
                // Cannot happen while the invariants hold: the connection stays muted until dispatch, and in every
                // other state. Keep order safe: hold it like an exclusive request (an illegal move unless PIPELINED).
                stats.pluginFaults.increment();
                readWhileMuted.fault("kpipe: request read on {} while it should be muted: {}", id, conn);
                return hold(conn, request);
            } else if (cls == RequestClass.EXCLUSIVE) {
                if (conn.slots.isEmpty() && !conn.throttle.throttled()) {
                    // Nothing to drain: Kafka takes the connection back as it reads this request.
                    release.release(conn, ConnectionEvent.HAND_BACK);
                    stats.downgrades.increment();
                    return Admission.CLASSIC;
                }
                stats.drains.increment();
                return hold(conn, request);
            }
            reservations.settle(conn.reservation, sizeInBytes, upgrade);
            if (sizeInBytes > conn.largestRequest) {
                conn.largestRequest = sizeInBytes;
            }
            if (conn.context == null) {
                conn.context = context; // taken over after a deferred upgrade
            }
            conn.slots.addLast(conn.newSlot(request, sizeInBytes, ticker.nanos()));
            conn.inflightBytes += sizeInBytes;
            conn.publish();
            conn.awaitingDispatch = request;
            stats.waitStarted(WaitReason.AWAITING_DISPATCH);
            conn.muted = true;
            stats.inflightRequests.incrementAndGet();
            stats.pipelinedRequests.increment();
            stats.recordInflight(conn.slots.size());
            return Admission.PIPELINED;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            admitFailed.fault("kpipe: failed to admit a request on {}; it is handled as exclusive", id, e);
            ConnectionPipeline tracked = connections.get(id);
            if (tracked == null) {
                return Admission.CLASSIC;
            }
            ConnectionState s = tracked.state();
            if ((s == ConnectionState.PIPELINED || s == ConnectionState.DRAINING_DISABLED)
                    && tracked.slots.isEmpty()
                    && !tracked.throttle.throttled()) {
                release.release(tracked, ConnectionEvent.HAND_BACK);
                stats.downgrades.increment();
                return Admission.CLASSIC;
            }
            return hold(tracked, request);
        }
    }

    /**
     * Holds an exclusive request for a drain (PIPELINED to DRAINING_EXCLUSIVE). In any other state the move is illegal
     * (counted; the connection closes once its earlier responses are written): a request held before is queued first,
     * to keep arrival order, and this one is held until the close.
     */
    private Admission hold(ConnectionPipeline conn, Object request) {
        conn.muted = true; // reading a request mutes Kafka's channel
        if (conn.transition(ConnectionEvent.EXCLUSIVE_HELD)) {
            conn.drainStartNanos = ticker.nanos();
        } else {
            conn.muteAndSchedule();
            if (conn.held != null) {
                conn.processor.processor.forward(conn.held);
                stats.heldRequests.decrementAndGet();
            }
        }
        reservations.release(conn.reservation);
        conn.held = request;
        stats.heldRequests.incrementAndGet();
        return Admission.HELD;
    }

    /**
     * A SASL re-authentication was read ({@code onReauthentication}): Kafka begins it now, or kpipe holds it for a
     * drain.
     *
     * @return true if kpipe holds it (or refused it: an illegal move); false if Kafka begins it now
     */
    boolean reauthentication(NetworkProcessor processor, String connectionId, Object reauthentication) {
        ConnectionPipeline conn = connections.get(connectionId);
        if (conn == null) {
            return false; // classic: Kafka re-authenticates now, as always
        }
        try {
            ConnectionState from = conn.state();
            if (from == ConnectionState.PIPELINED
                    && conn.slots.isEmpty()
                    && conn.awaitingDispatch == null
                    && !conn.throttle.throttled()
                    && quiet.over(conn)) {
                // Nothing outstanding, nothing written lately: Kafka takes the connection back and re-authenticates
                // it now.
                release.release(conn, ConnectionEvent.HAND_BACK);
                stats.downgrades.increment();
                return false;
            }
            if (!conn.transition(ConnectionEvent.REAUTHENTICATION_HELD)) {
                // Illegal (counted): such a connection stays muted. Beginning the re-authentication now could write
                // its handshake response inside an earlier response; closing the connection once the earlier
                // responses are written cannot (the client reconnects).
                reauthenticationWhileMuted.fault(
                        "kpipe: re-authentication on {} while it should be muted: {};"
                                + " closing it once its earlier responses are written",
                        connectionId,
                        conn);
                conn.muteAndSchedule();
                return true;
            }
            if (from == ConnectionState.PIPELINED) {
                conn.drainStartNanos = ticker.nanos();
                stats.drains.increment();
            } // else draining with nothing held (kpipe was disabled): the re-authentication waits for that drain
            conn.held = reauthentication;
            stats.heldRequests.incrementAndGet();
            stats.reauthenticationDrains.increment();
            reservations.release(conn.reservation);
            conn.muteAndSchedule();
            return true;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.warn("kpipe: failed to defer the re-authentication of {}", connectionId, e);
            // Once held, the drain begins it; else Kafka begins it now.
            return conn.held == reauthentication;
        }
    }
}
