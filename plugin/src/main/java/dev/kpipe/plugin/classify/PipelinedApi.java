// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * The table of APIs kpipe may pipeline: one row per API, with its class ({@link RequestClass#PIPELINED}: it upgrades
 * a classic connection; {@link RequestClass#PIPELINED_NO_UPGRADE}: pipelined only on a connection pipelined
 * already), its {@link DispatchPoint}, the {@link Switch} that turns it off, which of its requests are transactional
 * and whether its topics go through the topic policy. Every API without a row is exclusive: drained and handled
 * classically. Adding an API is a row here (and a {@link Switch} constant for a new on/off key), plus, for
 * {@link DispatchPoint#AFTER_VERIFICATION}, the binding's hook points that report the deferred step (docs/core.md,
 * "Adding an API").
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
    PRODUCE(
            ApiKeys.PRODUCE,
            RequestClass.PIPELINED,
            DispatchPoint.AFTER_VERIFICATION,
            Switch.NONE,
            r -> ((ProduceRequest) r).transactionalId() != null,
            true),
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
            ApiKeys.TXN_OFFSET_COMMIT,
            RequestClass.PIPELINED,
            DispatchPoint.AFTER_VERIFICATION,
            Switch.OFFSET_COMMITS,
            r -> true,
            false),
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
    METADATA(ApiKeys.METADATA, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.NONE),
    /** Read-only, answered inside handle. */
    API_VERSIONS(ApiKeys.API_VERSIONS, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.NONE),
    /** Client telemetry (KIP-714), answered inside handle. */
    GET_TELEMETRY_SUBSCRIPTIONS(
            ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS,
            RequestClass.PIPELINED_NO_UPGRADE,
            DispatchPoint.HANDLE_RETURN,
            Switch.NONE),
    /** Client telemetry (KIP-714), answered inside handle. */
    PUSH_TELEMETRY(ApiKeys.PUSH_TELEMETRY, RequestClass.PIPELINED_NO_UPGRADE, DispatchPoint.HANDLE_RETURN, Switch.NONE);

    /**
     * An on/off setting of pipelined APIs, with its {@code kpipe.*} key: {@code KpipeConfig} defines a boolean key per
     * switch from these fields, the runtime applies each at start-up and, if {@link #dynamic()}, on a dynamic broker
     * config change (KIP-226), and the {@link RequestClassifier} keeps one on/off state per switch. A new switch is a
     * constant here; the rows it turns off name it.
     */
    public enum Switch {
        /** No switch: the row is pipelined while {@code kpipe.enable} is on. Has no key; always on. */
        NONE(null, true, false, null),
        /** {@code kpipe.transactions.pipelined}: the transactional requests of every row ({@link #transactional}). */
        TRANSACTIONS(
                "kpipe.transactions.pipelined",
                true,
                true,
                "Pipeline transactional produce (exactly-once producers) to included topics: its connection reads the "
                        + "next request once the append happened, after KIP-890 verification with the transaction coordinator "
                        + "when the broker verifies. TXN_OFFSET_COMMIT is pipelined only while this and "
                        + "kpipe.offset.commits.pipelined"
                        + " are both true; the other transaction requests (END_TXN among them) "
                        + "stay exclusive. False: transactional produce is exclusive. Applies to requests read from then on."),
        /** {@code kpipe.offset.commits.pipelined}: the rows of the group coordinator. */
        OFFSET_COMMITS(
                "kpipe.offset.commits.pipelined",
                true,
                true,
                "Pipeline offset commits: OFFSET_COMMIT upgrades a connection and is pipelined like a produce (the "
                        + "connection reads the next request once the group coordinator appended the commit, or enqueued it "
                        + "in its offsets partition's queue: a later commit is applied after it), TXN_OFFSET_COMMIT too "
                        + "(with kpipe.transactions.pipelined"
                        + "), and HEARTBEAT and CONSUMER_GROUP_HEARTBEAT are pipelined on a "
                        + "pipelined connection. JOIN_GROUP, SYNC_GROUP, LEAVE_GROUP and OFFSET_FETCH stay exclusive. False: "
                        + "all four exclusive. Applies to requests read from then on.");

        private static final List<Switch> SETTINGS =
                java.util.Arrays.stream(values()).filter(s -> s.key != null).toList();

        private final String key;
        private final boolean defaultOn;
        private final boolean dynamic;
        private final String documentation;

        Switch(String key, boolean defaultOn, boolean dynamic, String documentation) {
            this.key = key;
            this.defaultOn = defaultOn;
            this.dynamic = dynamic;
            this.documentation = documentation;
        }

        /** @return the switches that have a key, in definition order (the order of the settings table) */
        public static List<Switch> settings() {
            return SETTINGS;
        }

        /** @return its boolean {@code kpipe.*} key; {@code null} for {@link #NONE} */
        public String key() {
            return key;
        }

        /** @return its default: on (true) or off */
        public boolean defaultOn() {
            return defaultOn;
        }

        /** @return true if a dynamic broker config change (KIP-226) applies it while the broker runs */
        public boolean dynamic() {
            return dynamic;
        }

        /** @return its documentation, the meaning column of the settings table */
        public String documentation() {
            return documentation;
        }
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
    /** {@code null}: never. */
    private final Predicate<AbstractRequest> transactional;

    private final boolean topicPolicy;

    /** A row whose requests are never transactional and name no topics the topic policy decides on. */
    PipelinedApi(ApiKeys api, RequestClass requestClass, DispatchPoint dispatchPoint, Switch turnedOffBy) {
        this(api, requestClass, dispatchPoint, turnedOffBy, null, false);
    }

    PipelinedApi(
            ApiKeys api,
            RequestClass requestClass,
            DispatchPoint dispatchPoint,
            Switch turnedOffBy,
            Predicate<AbstractRequest> transactional,
            boolean topicPolicy) {
        this.api = api;
        this.requestClass = requestClass;
        this.dispatchPoint = dispatchPoint;
        this.turnedOffBy = turnedOffBy;
        this.transactional = transactional;
        this.topicPolicy = topicPolicy;
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

    /** @return the switch that turns it off, {@link Switch#NONE} if only {@code kpipe.enable} does */
    public Switch turnedOffBy() {
        return turnedOffBy;
    }

    /**
     * Whether a request of this row is part of a transaction: such a request is pipelined only while
     * {@link Switch#TRANSACTIONS} is on and, for a row dispatched {@link DispatchPoint#AFTER_VERIFICATION}, the broker
     * reports its deferred dispatch. Allocates nothing. Thread: any.
     *
     * @param request a parsed request of this row's API
     * @return true if it is transactional (a PRODUCE with a transactional id; every TXN_OFFSET_COMMIT)
     */
    public boolean transactional(AbstractRequest request) {
        return transactional != null && transactional.test(request);
    }

    /** @return true if some of its requests may be {@link #transactional} (then {@link Switch#TRANSACTIONS} covers them) */
    public boolean hasTransactionalRequests() {
        return transactional != null;
    }

    /**
     * @return true if its requests are {@link ProduceRequest}s whose every topic the {@link TopicPolicy} must pipeline
     *     (and which per-topic storage pressure applies to)
     */
    public boolean topicPolicy() {
        return topicPolicy;
    }

    /**
     * @return its name in metric names, Kafka's API name in lower case with dashes, e.g. {@code offset-commit} for
     *     OFFSET_COMMIT
     */
    public String metricLabel() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
