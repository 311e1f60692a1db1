// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The table of APIs kpipe may pipeline: one row per API, with its class ({@link RequestClass#PIPELINED}: it upgrades
 * a classic connection; {@link RequestClass#PIPELINED_NO_UPGRADE}: pipelined only on a connection pipelined
 * already), its {@link DispatchPoint} and the setting that turns it off. Every API without a row is exclusive:
 * drained and handled classically. Adding an API is a row here, plus, for {@link DispatchPoint#AFTER_VERIFICATION},
 * the binding's hook that reports the deferred step.
 *
 * <p>Exclusive on purpose, with their reason: JOIN_GROUP and SYNC_GROUP wait in the coordinator for the other
 * members (a rebalance) and a later request of the connection could change what they wait for; LEAVE_GROUP ends the
 * membership a pipelined heartbeat or commit would use; OFFSET_FETCH reads committed offsets, which an earlier
 * pipelined commit of the same connection may not have completed yet (stock answers it after that commit);
 * FETCH waits in the purgatory; the transaction APIs other than TXN_OFFSET_COMMIT (INIT_PRODUCER_ID,
 * ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN) change the transaction state the pipelined requests write into,
 * so END_TXN drains and a transaction's offsets are in before its commit; SASL and admin requests.
 *
 * <p>Immutable; thread-safe.
 */
public enum PipelinedApi {
    /**
     * Produce to topics the topic policy pipelines, any acks; a transactional one under
     * {@code kpipe.transactions.pipelined} (its append follows the verification, KIP-890).
     */
    PRODUCE(ApiKeys.PRODUCE, RequestClass.PIPELINED, DispatchPoint.AFTER_VERIFICATION, Switch.ALWAYS),
    /**
     * An offset commit (a consumer's {@code commitAsync}, {@code commitSync}): appended to the offsets log by the
     * classic coordinator, or enqueued as a write of its offsets partition by KIP-848's coordinator runtime, inside
     * handle; a later commit of the connection is applied after it, so it wins.
     */
    OFFSET_COMMIT(ApiKeys.OFFSET_COMMIT, RequestClass.PIPELINED, DispatchPoint.HANDLE_RETURN, Switch.OFFSET_COMMITS),
    /**
     * An exactly-once producer's offset commit inside its transaction; also under {@code kpipe.transactions.pipelined}
     * (its write follows the verification of the offsets partition, KIP-890).
     */
    TXN_OFFSET_COMMIT(
            ApiKeys.TXN_OFFSET_COMMIT, RequestClass.PIPELINED, DispatchPoint.AFTER_VERIFICATION, Switch.OFFSET_COMMITS),
    /**
     * A classic group member's heartbeat: handled under the group lock (classic coordinator) or enqueued as a write
     * (KIP-848's runtime) inside handle; answered after the earlier responses, but seen by the coordinator as soon as
     * it arrives instead of behind every earlier commit.
     */
    HEARTBEAT(ApiKeys.HEARTBEAT, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.OFFSET_COMMITS),
    /** A KIP-848 member's heartbeat: a write enqueued in the coordinator runtime inside handle, like a commit. */
    CONSUMER_GROUP_HEARTBEAT(
            ApiKeys.CONSUMER_GROUP_HEARTBEAT,
            RequestClass.PIPELINED_NO_UPGRADE,
            DispatchPoint.HANDLE_RETURN,
            Switch.OFFSET_COMMITS),
    /** Read-only, answered inside handle; clients send it on producing connections. */
    METADATA(ApiKeys.METADATA, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.ALWAYS),
    /** Read-only, answered inside handle. */
    API_VERSIONS(ApiKeys.API_VERSIONS, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.ALWAYS),
    /** Client telemetry (KIP-714), answered inside handle. */
    GET_TELEMETRY_SUBSCRIPTIONS(
            ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS,
            RequestClass.PIPELINED_NO_UPGRADE,
            DispatchPoint.HANDLE_RETURN,
            Switch.ALWAYS),
    /** Client telemetry (KIP-714), answered inside handle. */
    PUSH_TELEMETRY(
            ApiKeys.PUSH_TELEMETRY, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.ALWAYS);

    /** Which setting turns a row off (it is then exclusive). */
    public enum Switch {
        /** None: pipelined while kpipe is on. */
        ALWAYS,
        /** {@code kpipe.offset.commits.pipelined}. */
        OFFSET_COMMITS
    }

    private static final Map<ApiKeys, PipelinedApi> BY_KEY = new EnumMap<>(ApiKeys.class);

    static {
        for (PipelinedApi row : values()) {
            BY_KEY.put(row.api, row);
        }
    }

    private final ApiKeys api;
    private final RequestClass requestClass;
    private final DispatchPoint dispatchPoint;
    private final Switch turnedOffBy;

    PipelinedApi(ApiKeys api, RequestClass requestClass, DispatchPoint dispatchPoint, Switch turnedOffBy) {
        this.api = api;
        this.requestClass = requestClass;
        this.dispatchPoint = dispatchPoint;
        this.turnedOffBy = turnedOffBy;
    }

    /**
     * @param api a request's API
     * @return its row, or {@code null} if it is always exclusive
     */
    public static PipelinedApi of(ApiKeys api) {
        return BY_KEY.get(api);
    }

    /** @return the API */
    public ApiKeys api() {
        return api;
    }

    /** @return {@link RequestClass#PIPELINED} (it upgrades a classic connection) or {@code PIPELINED_NO_UPGRADE} */
    public RequestClass requestClass() {
        return requestClass;
    }

    /** @return where its order-defining step happens */
    public DispatchPoint dispatchPoint() {
        return dispatchPoint;
    }

    /** @return the setting that turns it off */
    public Switch turnedOffBy() {
        return turnedOffBy;
    }

    /**
     * @return its name in metric names, Kafka's API name in lower case with dashes, e.g. {@code offset-commit} for
     *     OFFSET_COMMIT
     */
    public String metricLabel() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
