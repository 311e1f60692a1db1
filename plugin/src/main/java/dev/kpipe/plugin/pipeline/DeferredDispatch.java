package dev.kpipe.plugin.pipeline;

import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.spi.NetworkProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pipelined transactional produce whose append the broker defers past {@code KafkaApis.handle} (KIP-890 transaction
 * verification; {@code NetworkEventListener.onDispatchDeferred}): the connection's {@link DispatchPhase} stays active,
 * so it reads its next request only once the append happened ({@code onRequestDispatched}), which keeps at most one
 * verification of a connection outstanding and its requests appended in arrival order.
 *
 * <p>Invariants: only the request in the dispatch phase is deferred; a deferred
 * request is counted once ({@code deferred-dispatch-total}, {@code wait-awaiting-append-total}). A written response
 * of the deferred request also ends the wait (the broker answers a produce only after its append), so a completion the
 * broker's hooks missed cannot keep the connection muted for good ({@code deferred-dispatch-fallback-total}); the
 * dispatch signal and this fallback end the dispatch phase by compare-and-set ({@link DispatchPhase#end}),
 * so exactly one of them does, and never a later request's.
 *
 * <p>Threads: {@link #deferred} on a request handler thread; {@link #responseWritten} on the connection's network
 * thread; {@link #support} on the installing thread.
 */
final class DeferredDispatch {
    private static final Logger LOG = LoggerFactory.getLogger(DeferredDispatch.class);

    private final ConnectionTable connections;
    private final RequestClassifier classifier;
    private final PipelineStats stats;

    DeferredDispatch(ConnectionTable connections, RequestClassifier classifier, PipelineStats stats) {
        this.connections = connections;
        this.classifier = classifier;
        this.stats = stats;
    }

    /**
     * {@code KafkaApis.handle} returned for {@code request} but its append awaits a {@code CallbackRequest}.
     *
     * @param connectionId the request's connection
     * @param request the broker's request handle
     */
    void deferred(String connectionId, Object request) {
        ConnectionPipeline conn = connections.get(connectionId);
        if (conn != null && conn.dispatch().defer(request)) {
            stats.deferredDispatches.increment();
            stats.waitStarted(WaitReason.AWAITING_APPEND);
        }
    }

    /**
     * A response of the connection was written: if it answers the deferred request, the append happened.
     *
     * @param processor the connection's processor
     * @param conn the connection
     * @param response the broker's response handle
     */
    void responseWritten(NetworkProcessor processor, ConnectionPipeline conn, Object response) {
        Object request = processor.requestOf(response);
        DispatchPhase dispatch = conn.dispatch();
        if (dispatch.deferredFor(request) && dispatch.end(request)) {
            stats.deferredDispatchFallbacks.increment();
        }
    }

    /**
     * Whether the broker's hooks report deferred appends; without them transactional produce stays exclusive, with one
     * ERROR.
     *
     * @param supported what the binding reported
     * @param detail what it lacks, when not supported
     */
    void support(boolean supported, String detail) {
        classifier.deferredDispatch(supported);
        if (!supported) {
            LOG.error(
                    "kpipe: cannot see when a verified transactional append happens (KIP-890): {}; transactional "
                            + "produce stays exclusive on this broker, everything else is pipelined",
                    detail);
        }
    }
}
