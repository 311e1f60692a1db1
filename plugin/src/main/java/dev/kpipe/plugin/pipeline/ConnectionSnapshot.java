// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.InflightLimits;
import java.util.EnumSet;
import java.util.Set;

/**
 * One connection kpipe owns, as the connection dump shows it: who it is (from the context of the request that upgraded
 * it), its state, what is in flight and why it is not reading.
 *
 * <p>{@link #of} is the one place that reads a {@link ConnectionPipeline} from another thread: its volatile fields,
 * the counts its network thread publishes with opaque stores ({@link InflightRequests}), and plain boolean and int
 * fields that are atomic to read (JLS 17.7). The values are each current within a moment of the
 * read, not one atomic picture of the connection: a reason can show beside a count from just before it changed.
 *
 * @param connectionId Kafka's connection id ({@code localAddr:port-remoteAddr:port-processor-index})
 * @param listener the listener name, or {@code null} if not known yet (taken over after a deferred upgrade and nothing
 *     read since)
 * @param principal the authenticated principal ({@code User:ANONYMOUS} on PLAINTEXT), or {@code null}
 * @param clientId the client id, or {@code null}
 * @param softwareName the client software name (KIP-511, {@code unknown} if the client sent none), or {@code null}
 * @param softwareVersion the client software version, or {@code null}
 * @param state {@code PIPELINED} or {@code DRAINING} ({@link ConnectionState#dumpName()})
 * @param inflightRequests requests read and not yet answered
 * @param inflightBytes their size, bytes
 * @param heldResponses responses ready but held behind an earlier one of this connection
 * @param oldestInflightNanos age of the oldest request in flight, ns; -1 if none
 * @param pipelinedNanos time since kpipe took the connection over, ns
 * @param waitReasons why it is not reading now; empty if it is reading
 */
public record ConnectionSnapshot(
        String connectionId,
        String listener,
        String principal,
        String clientId,
        String softwareName,
        String softwareVersion,
        String state,
        int inflightRequests,
        long inflightBytes,
        int heldResponses,
        long oldestInflightNanos,
        long pipelinedNanos,
        Set<WaitReason> waitReasons) {

    /** Makes {@link #waitReasons} unmodifiable. */
    public ConnectionSnapshot {
        waitReasons = Set.copyOf(waitReasons);
    }

    /**
     * Reads a connection racily (see the class comment). Thread: any; takes no lock; never throws for a connection
     * whose fields change meanwhile.
     *
     * @param c the connection
     * @param limits the per-connection limits in force
     * @param nowNanos the coordinator's clock at the read, ns
     * @return the snapshot
     */
    static ConnectionSnapshot of(ConnectionPipeline<?, ?> c, InflightLimits limits, long nowNanos) {
        ConnectionIdentity ctx = c.identity();
        ConnectionState state = c.state();
        InflightView<?, ?> requests = c.inflight();
        int inflight = requests.publishedCount();
        long bytes = requests.publishedBytes();
        long oldest = requests.publishedOldestReadNanos();
        EnumSet<WaitReason> reasons = EnumSet.noneOf(WaitReason.class);
        if (c.awaitingDispatch()) {
            reasons.add(c.awaitingAppend() ? WaitReason.AWAITING_APPEND : WaitReason.AWAITING_DISPATCH);
        }
        if (c.budgetWaiting()) {
            reasons.add(WaitReason.BUDGET);
        }
        if (!state.draining() && !limits.admitsAnother(inflight, bytes)) {
            reasons.add(WaitReason.INFLIGHT_LIMIT);
        }
        if (!state.draining() && requests.publishedUndrained()) {
            reasons.add(WaitReason.UNDRAINED);
        }
        if (c.pressureBlocked()) {
            reasons.add(WaitReason.STORAGE_PRESSURE);
        }
        if (c.throttled()) {
            reasons.add(WaitReason.THROTTLED);
        }
        ClientProbation probation = c.client();
        if (!state.draining() && inflight > 0 && probation != null && probation.onProbation()) {
            reasons.add(WaitReason.CLIENT_THROTTLED);
        }
        WaitReason ofState = state.waitReason();
        if (ofState != null) {
            reasons.add(ofState);
        }
        if (reasons.isEmpty() && c.muted()) {
            reasons.add(WaitReason.MUTED);
        }
        return new ConnectionSnapshot(
                c.id(),
                ctx == null || ctx.listenerName() == null
                        ? null
                        : ctx.listenerName().value(),
                principalOf(ctx),
                ctx == null ? null : ctx.clientId(),
                ctx == null || ctx.clientInformation() == null
                        ? null
                        : ctx.clientInformation().softwareName(),
                ctx == null || ctx.clientInformation() == null
                        ? null
                        : ctx.clientInformation().softwareVersion(),
                state.dumpName(),
                inflight,
                bytes,
                requests.publishedHeldResponses(),
                oldest == 0 || inflight == 0 ? -1 : Math.max(0, nowNanos - oldest),
                Math.max(0, nowNanos - c.upgradedNanos()),
                reasons);
    }

    /**
     * @return the principal as text; a principal builder's own {@code KafkaPrincipal} subclass whose {@code toString}
     *     throws shows as {@code error=<exception class>} instead of failing the whole dump
     */
    private static String principalOf(ConnectionIdentity ctx) {
        if (ctx == null || ctx.principal() == null) {
            return null;
        }
        try {
            return ctx.principal().toString();
        } catch (RuntimeException e) {
            return "error=" + e.getClass().getName();
        }
    }
}
