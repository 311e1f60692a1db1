// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.plugin.classify.PipelinedApi;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * Counters and gauges of the pipelining state, read by the metrics. Updated on network and handler
 * threads; every field is safe to read from any thread.
 */
public final class PipelineStats {
    /** Connections currently in pipelined or draining mode. */
    final AtomicInteger pipelinedConnections = new AtomicInteger();
    /** Responses ready but held back because an earlier response of their connection is outstanding. */
    final AtomicInteger heldResponses = new AtomicInteger();
    /** Exclusive requests held until their connection drains. */
    final AtomicInteger heldRequests = new AtomicInteger();
    /** Requests read on pipelined connections and not yet answered. */
    final AtomicInteger inflightRequests = new AtomicInteger();
    /** Connections with an open quota throttle window. */
    final AtomicInteger throttledConnections = new AtomicInteger();

    final LongAdder upgrades = new LongAdder();
    /** Upgrades not done because the byte budget had no room for the request that would upgrade. */
    final LongAdder upgradesDeferred = new LongAdder();

    final LongAdder downgrades = new LongAdder();
    final LongAdder drains = new LongAdder();
    final LongAdder drainTimeNanos = new LongAdder();
    final LongAdder pipelinedRequests = new LongAdder();
    final LongAdder classificationFallbacks = new LongAdder();
    final LongAdder pluginFaults = new LongAdder();
    final LongAdder throttleWindows = new LongAdder();
    /** Time pipelined connections spent with at least one throttle window open. */
    final LongAdder throttleTimeNanos = new LongAdder();

    final AtomicLong maxInflightPerConnection = new AtomicLong();
    /** Idle reservations given back because other connections waited for the budget. */
    final LongAdder reservationsRevoked = new LongAdder();
    /** Wake-ups kpipe asked of a processor's selector because a request's dispatch ended. */
    final LongAdder processorWakeups = new LongAdder();

    /**
     * @return wake-ups kpipe asked of the network processors since start (beyond the broker's own, for a response)
     *     because a request's dispatch ended while no round of its processor was due
     */
    public long processorWakeups() {
        return processorWakeups.sum();
    }

    /** SASL re-authentications that waited for the earlier responses of their pipelined connection. */
    final LongAdder reauthenticationDrains = new LongAdder();

    /**
     * @return SASL re-authentications (KIP-368) that arrived on a pipelined connection with responses outstanding
     *     and were begun only once those were written, since start
     */
    public long reauthenticationDrains() {
        return reauthenticationDrains.sum();
    }

    /** Produce requests whose dispatch waited for an asynchronous append after handle returned (KIP-890). */
    final LongAdder deferredDispatches = new LongAdder();

    /**
     * @return produce requests on pipelined connections whose {@code KafkaApis.handle} returned before their append
     *     (transaction verification, KIP-890), so that their connection read its next request only once the append
     *     had happened, since start
     */
    public long deferredDispatches() {
        return deferredDispatches.sum();
    }

    /** Deferred dispatches ended by their written response rather than by the broker's completion hooks. */
    final LongAdder deferredDispatchFallbacks = new LongAdder();

    /**
     * @return deferred dispatches (of {@link #deferredDispatches()}) whose wait ended because their response was
     *     written before the append's completion was signalled, since start: rare races, or hooks that miss
     */
    public long deferredDispatchFallbacks() {
        return deferredDispatchFallbacks.sum();
    }

    /** Requests admitted on pipelined connections, by {@link PipelinedApi#ordinal()}. */
    private final LongAdder[] pipelinedByApi = new LongAdder[PipelinedApi.values().length];
    /** The most requests of one API in flight at once on one connection, by {@link PipelinedApi#ordinal()}. */
    private final AtomicLong[] maxInflightByApi = new AtomicLong[PipelinedApi.values().length];

    {
        for (int i = 0; i < pipelinedByApi.length; i++) {
            pipelinedByApi[i] = new LongAdder();
            maxInflightByApi[i] = new AtomicLong();
        }
    }

    /**
     * A request of {@code api} was admitted on a pipelined connection. Thread: the connection's network thread; no
     * allocation.
     *
     * @param api its row of the table of pipelined APIs
     * @param inflightOfApi requests of that API in flight on its connection now, this one included
     */
    void requestAdmitted(PipelinedApi api, int inflightOfApi) {
        pipelinedByApi[api.ordinal()].increment();
        AtomicLong max = maxInflightByApi[api.ordinal()];
        long m = max.get();
        while (inflightOfApi > m && !max.compareAndSet(m, inflightOfApi)) {
            m = max.get();
        }
    }

    /**
     * @param api a row of the table of pipelined APIs
     * @return requests of that API admitted on pipelined connections since start ({@code pipelined-<api>-total})
     */
    public long pipelinedRequests(PipelinedApi api) {
        return pipelinedByApi[api.ordinal()].sum();
    }

    /**
     * @param api a row of the table of pipelined APIs
     * @return the most requests of that API in flight at once on one connection since start
     *     ({@code inflight-<api>-per-connection-max})
     */
    public long maxInflightPerConnection(PipelinedApi api) {
        return maxInflightByApi[api.ordinal()].get();
    }

    /** Waits started on connections kpipe owns, by {@link WaitReason#ordinal()}. */
    private final LongAdder[] waits = new LongAdder[WaitReason.values().length];

    {
        for (int i = 0; i < waits.length; i++) {
            waits[i] = new LongAdder();
        }
    }

    /**
     * A connection kpipe owns started waiting for the reason (it was not waiting for it just before). Thread: the
     * connection's network thread, or a handler thread for {@link WaitReason#AWAITING_APPEND}; no allocation.
     *
     * @param reason why it waits
     */
    void waitStarted(WaitReason reason) {
        waits[reason.ordinal()].increment();
    }

    /**
     * @param reason a wait reason
     * @return times a connection kpipe owns started waiting for it, since start ({@link WaitReason#metricName()})
     */
    public long waits(WaitReason reason) {
        return waits[reason.ordinal()].sum();
    }

    /**
     * Connections closed only after their earlier responses were written, because a later request was refused or the
     * client's input ended.
     */
    final LongAdder deferredCloses = new LongAdder();

    /**
     * @return connections on which the broker refused a request kpipe had read ahead (unparseable, unknown API,
     *     unsupported version, an expired session) or whose input ended with requests unanswered (half-close, a frame
     *     refused for its size, a failed read), and that kpipe closed only once every earlier response was written,
     *     since start
     */
    public long deferredCloses() {
        return deferredCloses.sum();
    }

    /** The size of the coordinator's connection table, read by {@link #connectionsTracked()}. */
    private volatile IntSupplier connectionTable = () -> 0;

    /** Thread: any. @param table the size of the connection table of the coordinator counting into these stats */
    void connectionTable(IntSupplier table) {
        this.connectionTable = table;
    }

    /**
     * @return entries in the coordinator's connection table now: the connections kpipe keeps state for, counted
     *     from the table itself rather than by {@link #pipelinedConnections()}'s counter (the two differ only if
     *     kpipe's bookkeeping is broken); a leak check
     */
    public int connectionsTracked() {
        return connectionTable.getAsInt();
    }

    /** @return idle byte-budget reservations given back while others waited, since start */
    public long reservationsRevoked() {
        return reservationsRevoked.sum();
    }

    /** @return connections in pipelined or draining mode now */
    public int pipelinedConnections() {
        return pipelinedConnections.get();
    }

    /** @return responses held for ordering now */
    public int heldResponses() {
        return heldResponses.get();
    }

    /** @return exclusive requests held for a drain now */
    public int heldRequests() {
        return heldRequests.get();
    }

    /** @return requests in flight on pipelined connections now */
    public int inflightRequests() {
        return inflightRequests.get();
    }

    /** @return pipelined connections inside a quota throttle window now */
    public int throttledConnections() {
        return throttledConnections.get();
    }

    /** @return connections upgraded to pipelined mode since start */
    public long upgrades() {
        return upgrades.sum();
    }

    /** @return requests that would have upgraded their connection but stayed classic: no budget room */
    public long upgradesDeferred() {
        return upgradesDeferred.sum();
    }

    /** @return connections handed back to classic handling since start */
    public long downgrades() {
        return downgrades.sum();
    }

    /**
     * @return drains started since start: an exclusive request waited for earlier responses, or a pipelined
     *     connection drained because kpipe was disabled
     */
    public long drains() {
        return drains.sum();
    }

    /** @return total time of the finished drains, in nanoseconds */
    public long drainTimeNanos() {
        return drainTimeNanos.sum();
    }

    /** @return requests admitted on pipelined connections since start */
    public long pipelinedRequests() {
        return pipelinedRequests.sum();
    }

    /** @return requests handled classically because classification threw */
    public long classificationFallbacks() {
        return classificationFallbacks.sum();
    }

    /** @return throwables caught in the pipelining code */
    public long pluginFaults() {
        return pluginFaults.sum();
    }

    /** @return quota throttle windows seen on pipelined connections since start */
    public long throttleWindows() {
        return throttleWindows.sum();
    }

    /**
     * @return total time pipelined connections spent throttled, in nanoseconds: per connection, from a
     *     window opening while none was open to the last open window closing (or the connection being
     *     closed or handed back), so overlapping windows count once
     */
    public long throttleTimeNanos() {
        return throttleTimeNanos.sum();
    }

    /** @return the most requests ever in flight at once on one connection */
    public long maxInflightPerConnection() {
        return maxInflightPerConnection.get();
    }

    void recordInflight(int inflight) {
        long max = maxInflightPerConnection.get();
        while (inflight > max && !maxInflightPerConnection.compareAndSet(max, inflight)) {
            max = maxInflightPerConnection.get();
        }
    }
}
