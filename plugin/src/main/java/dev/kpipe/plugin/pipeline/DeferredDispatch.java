// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.plugin.classify.DispatchPoint;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pipelined transactional requests whose order-defining write the broker defers past {@code KafkaApis.handle} (KIP-890
 * transaction verification; {@code NetworkEventListener.onDispatchDeferred}): a transactional produce (its append)
 * and a TXN_OFFSET_COMMIT (its write to the offsets topic) take the same path, every
 * {@link DispatchPoint#AFTER_VERIFICATION} row of the table of pipelined APIs. The connection's dispatch phase stays
 * active, so it reads its next request only once the write happened ({@code onRequestDispatched}), which keeps at
 * most one verification of a connection outstanding and its requests written in arrival order.
 *
 * <p>Invariants: only the request in the dispatch phase is deferred; a deferred request is counted once ({@code
 * deferred-dispatch-total}, {@code wait-awaiting-append-total}). A written response of the deferred request also ends
 * the wait (the broker answers such a request only after its write), so a completion the broker's hooks missed cannot
 * keep the connection muted for good ({@code deferred-dispatch-fallback-total}); the dispatch signal and this fallback
 * end the dispatch phase by compare-and-set ({@link ConnectionPipeline#dispatchEnded}, {@link
 * ConnectionPipeline#deferredRequestAnswered}), so exactly one of them does, and never a later request's.
 * <p>Threads: {@link #deferred} on a request handler thread; {@link #responseWritten} on the connection's network
 * thread; {@link #support} on the installing thread.
 */
final class DeferredDispatch<Q, S> {
    private static final Logger LOG = LoggerFactory.getLogger(DeferredDispatch.class);

    private final ConnectionTable<Q, S> connections;
    private final RequestClassifier classifier;
    private final PipelineStats stats;

    DeferredDispatch(ConnectionTable<Q, S> connections, RequestClassifier classifier, PipelineStats stats) {
        this.connections = connections;
        this.classifier = classifier;
        this.stats = stats;
    }

    /**
     * {@code KafkaApis.handle} returned for {@code request} but its write (a produce's append, a TXN_OFFSET_COMMIT's
     * offsets) awaits a {@code CallbackRequest}.
     *
     * @param connectionId the request's connection
     * @param request the broker's request handle
     */
    void deferred(String connectionId, Q request) {
        ConnectionPipeline<Q, S> conn = connections.get(connectionId);
        if (conn != null && conn.dispatchDeferred(request)) {
            stats.deferredDispatches.increment();
            stats.waitStarted(WaitReason.AWAITING_APPEND);
        }
    }

    /**
     * A response of the connection was written: if it answers the deferred request, its write happened.
     *
     * @param processor the connection's processor
     * @param conn the connection
     * @param response the broker's response handle
     */
    void responseWritten(NetworkProcessor<Q, S> processor, ConnectionPipeline<Q, S> conn, S response) {
        if (conn.deferredRequestAnswered(processor.requestOf(response))) {
            stats.deferredDispatchFallbacks.increment();
        }
    }

    /**
     * For which APIs the broker's hooks report a deferred order-defining step; the transactional requests of a
     * {@link DispatchPoint#AFTER_VERIFICATION} row without them stay exclusive, with one ERROR naming them.
     *
     * @param apis the APIs the binding reports deferred dispatch for
     */
    void support(Set<ApiKeys> apis) {
        classifier.deferredDispatch(apis);
        List<String> missing = new ArrayList<>();
        for (PipelinedApi row : PipelinedApi.values()) {
            if (row.dispatchPoint() == DispatchPoint.AFTER_VERIFICATION && !apis.contains(row.api())) {
                missing.add(row.api().name());
            }
        }
        if (!missing.isEmpty()) {
            LOG.error(
                    "kpipe: the broker does not report when a verified transactional write happens (KIP-890) for {}; "
                            + "their transactional requests stay exclusive on this broker, everything else is pipelined",
                    missing);
        }
    }
}
