// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.Reservations;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.classify.RequestClass;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a request read, or a SASL re-authentication (KIP-368), does to its connection: classification (a throwable of
 * the policy makes the request exclusive, {@code classification-fallback-total}); the upgrade of a classic connection
 * by a pipelined request (deferred when the byte budget has no room for it); a pipelined request added to its
 * connection's requests in flight; an exclusive request or a re-authentication held for a drain (PIPELINED to
 * DRAINING_EXCLUSIVE or DRAINING_REAUTHENTICATION), or handed to Kafka at once when nothing is outstanding.
 *
 * <p>Invariants: at most one request per connection is in the dispatch phase; a request is added only to a PIPELINED
 * connection. Every read is a move of the connection's state ({@link ConnectionEvent#REQUEST_READ},
 * {@link ConnectionEvent#EXCLUSIVE_HELD}): a read on a connection kpipe keeps muted is an illegal move, counted, and
 * the connection closes once its earlier responses are written. Thread: the connection's network thread; nothing
 * thrown leaves ({@code plugin-fault-total}).
 */
final class Admissions<Q, S> {

    private static final Logger LOG = LoggerFactory.getLogger(Admissions.class);
    /** Faults that could repeat per request: WARN once each, then DEBUG (see {@link FaultLog}). */
    private final FaultLog admitFailed = new FaultLog(LOG);

    private final FaultLog reauthenticationWhileMuted = new FaultLog(LOG);

    private final RequestClassifier classifier;
    private final ProcessorTable<Q, S> processors;
    private final ConnectionTable<Q, S> connections;
    private final PipelineStats stats;
    private final Ticker ticker;
    private final Reservations reservations;
    private final QuietPeriod quiet;
    private final Drains.Release<Q, S> release;
    private final BooleanSupplier enabled;
    /** A storage plugin checks topics: a produce's topics are kept with its connection. */
    private final BooleanSupplier perTopicPressure;
    /** A connection's first read: on probation if its client is marked. */
    private final Throttles throttles;

    Admissions(
            ProcessorTable<Q, S> processors,
            RequestClassifier classifier,
            ConnectionTable<Q, S> connections,
            PipelineStats stats,
            Ticker ticker,
            Reservations reservations,
            QuietPeriod quiet,
            Drains.Release<Q, S> release,
            BooleanSupplier enabled,
            BooleanSupplier perTopicPressure,
            Throttles throttles) {
        this.throttles = throttles;
        this.processors = processors;
        this.classifier = classifier;
        this.connections = connections;
        this.stats = stats;
        this.ticker = ticker;
        this.reservations = reservations;
        this.quiet = quiet;
        this.release = release;
        this.enabled = enabled;
        this.perTopicPressure = perTopicPressure;
    }

    /**
     * A request was read ({@code onRequestReceived}): classifies it, upgrades a classic connection, appends it to a
     * pipelined one or holds it for a drain.
     *
     * @return how the broker must treat it
     */
    Admission received(
            NetworkProcessor<Q, S> processor,
            Q request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        String id = context.connectionId;
        ConnectionPipeline<Q, S> conn = connections.get(id);
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
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                stats.classificationFallbacks.increment();
                LOG.debug("kpipe: classification failed for {} on {}; handled as exclusive", context.header, id, e);
                cls = RequestClass.EXCLUSIVE;
            }
        }
        try {
            if (conn == null) {
                return upgrade(processor, request, context, body, cls, sizeInBytes);
            }
            if (cls == RequestClass.EXCLUSIVE) {
                if (idle(conn)) {
                    // Nothing to drain: Kafka takes the connection back as it reads this request.
                    release.release(conn, ConnectionEvent.HAND_BACK);
                    return Admission.CLASSIC;
                }
                return holdExclusive(conn, request);
            }
            return read(conn, request, context, body, sizeInBytes, false);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            admitFailed.fault("kpipe: failed to admit a request on {}; it is handled as exclusive", id, e);
            ConnectionPipeline<Q, S> tracked = connections.get(id);
            if (tracked == null) {
                return Admission.CLASSIC;
            }
            ConnectionState s = tracked.state();
            if ((s == ConnectionState.PIPELINED || s == ConnectionState.DRAINING_DISABLED)
                    && tracked.inflight().isEmpty()
                    && !tracked.throttled()) {
                release.release(tracked, ConnectionEvent.HAND_BACK);
                return Admission.CLASSIC;
            }
            return holdExclusive(tracked, request);
        }
    }

    /**
     * A request read on a classic connection: a pipelined one upgrades it, unless the byte budget has no room for it
     * (then it stays classic, and kpipe takes the connection over when its response is written: {@code
     * Ownership.takeOver}).
     */
    private Admission upgrade(
            NetworkProcessor<Q, S> processor,
            Q request,
            RequestContext context,
            AbstractRequest body,
            RequestClass cls,
            int sizeInBytes) {
        if (cls != RequestClass.PIPELINED) {
            return Admission.CLASSIC;
        }
        if (!reservations.tryAdmitRead(sizeInBytes)) {
            // No room in the budget for the request already read: it stays classic (Kafka's own one-at-a-time bound
            // applies). When its response is written, kpipe takes the connection over, muted, and it waits for
            // budget in line with the others.
            stats.upgradesDeferred.increment();
            processors.of(processor).upgradeDeferred(context.connectionId, sizeInBytes);
            return Admission.CLASSIC;
        }
        ConnectionPipeline<Q, S> conn =
                new ConnectionPipeline<>(context.connectionId, processors.of(processor), stats, ticker, 0);
        connections.add(conn);
        return read(conn, request, context, body, sizeInBytes, true);
    }

    /**
     * A pipelined request read on a connection kpipe owns: it joins the requests in flight and its dispatch phase
     * starts. A read on a connection kpipe keeps muted is an illegal move (see {@link #holdUntilClose}).
     *
     * @param upgrade true if it upgraded the connection (its bytes were admitted by {@code tryAdmitRead})
     */
    private Admission read(
            ConnectionPipeline<Q, S> conn,
            Q request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes,
            boolean upgrade) {
        conn.readMutedChannel();
        if (!conn.transition(ConnectionEvent.REQUEST_READ)) {
            return holdUntilClose(conn, request);
        }
        PipelinedApi api = PipelinedApi.of(context.header.apiKey());
        if (conn.identity() == null) {
            throttles.upgraded(conn, context);
        }
        conn.requestRead(request, context, sizeInBytes, api, reservations, upgrade);
        if (api.topicPolicy() && perTopicPressure.getAsBoolean()) {
            conn.producedTo(classifier.topicsOf((ProduceRequest) body, conn.produceTopics()));
        }
        return Admission.PIPELINED;
    }

    /** @return true if nothing of the connection is outstanding: Kafka may take it back as it is */
    private static boolean idle(ConnectionPipeline<?, ?> conn) {
        return conn.state() == ConnectionState.PIPELINED && conn.nothingOutstanding();
    }

    /**
     * Holds an exclusive request for a drain (PIPELINED to DRAINING_EXCLUSIVE). In any other state the move is illegal
     * ({@link #holdUntilClose}).
     */
    private Admission holdExclusive(ConnectionPipeline<Q, S> conn, Q request) {
        conn.readMutedChannel();
        if (!conn.transition(ConnectionEvent.EXCLUSIVE_HELD)) {
            return holdUntilClose(conn, request);
        }
        conn.hold(request, reservations);
        return Admission.HELD;
    }

    /**
     * After an illegal read (counted by {@link ConnectionPipeline#transition}: the connection now closes once its
     * earlier responses are written): a request held before is queued first, to keep arrival order, and this one is
     * held until the close, when it is queued as stock Kafka would have queued it on reading it.
     */
    private Admission holdUntilClose(ConnectionPipeline<Q, S> conn, Q request) {
        conn.muteAndSchedule();
        Q earlier = conn.takeHeldRequest();
        if (earlier != null) {
            conn.processor().release(earlier);
        }
        conn.hold(request, reservations);
        return Admission.HELD;
    }

    /**
     * A SASL re-authentication was read ({@code onReauthentication}): Kafka begins it now, or kpipe holds it for a
     * drain.
     *
     * @return true if kpipe holds it (or refused it: an illegal move); false if Kafka begins it now
     */
    boolean reauthentication(NetworkProcessor<Q, S> processor, String connectionId, Reauthentication reauthentication) {
        ConnectionPipeline<Q, S> conn = connections.get(connectionId);
        if (conn == null) {
            return false; // classic: Kafka re-authenticates now, as always
        }
        try {
            if (idle(conn) && quiet.over(conn)) {
                // Nothing outstanding, nothing written lately: Kafka takes the connection back and re-authenticates
                // it now.
                release.release(conn, ConnectionEvent.HAND_BACK);
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
            // From DRAINING_DISABLED (nothing held): the re-authentication waits for that drain.
            conn.holdReauthentication(reauthentication, reservations);
            conn.muteAndSchedule();
            return true;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            stats.pluginFaults.increment();
            LOG.warn("kpipe: failed to defer the re-authentication of {}", connectionId, e);
            // Once held, the drain begins it; else Kafka begins it now.
            return conn.held() == reauthentication;
        }
    }
}
