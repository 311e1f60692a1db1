// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.plugin.testkit.KafkaRequests.Parsed;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * What a {@link FakeBroker} run is made of: the broker's shape (processors, handler threads, kpipe
 * limits) and, per client connection, the requests it sends and how the broker answers each one.
 * Immutable; the parsed kafka-clients requests are built once and shared by every replay.
 */
final class Scenario {

    /** The request classes the fake clients send. */
    enum Kind {
        /** PRODUCE acks=-1 to an included topic: pipelined. */
        PRODUCE_ACKS_ALL,
        /** PRODUCE acks=1 to an included topic: pipelined. */
        PRODUCE_ACKS_1,
        /** PRODUCE acks=0 to an included topic: pipelined; no response (NoOpResponse). */
        PRODUCE_ACKS_0,
        /** PRODUCE acks=1 to an included and an excluded topic: exclusive. */
        PRODUCE_EXCLUDED,
        /**
         * Transactional PRODUCE to an included topic, to partitions already in the transaction (appended inside
         * {@code KafkaApis.handle}): exclusive, or pipelined when the scenario has {@link Scenario#transactions}.
         */
        PRODUCE_TRANSACTIONAL,
        /**
         * Transactional PRODUCE whose partition the broker verifies with the transaction coordinator first (KIP-890:
         * the first produce to it in a transaction): {@code KafkaApis.handle} returns before the append, which runs
         * in a {@code CallbackRequest} on a handler once the coordinator answered (a VERIFIED then a CALLBACK step).
         * Exclusive, or pipelined when the scenario has {@link Scenario#transactions}.
         */
        PRODUCE_TXN_VERIFIED,
        /**
         * OFFSET_COMMIT: pipelined, upgrades; its order-defining step (the classic coordinator's append, or the enqueue
         * of its write in KIP-848's coordinator runtime) happens inside {@code KafkaApis.handle}.
         */
        OFFSET_COMMIT,
        /**
         * TXN_OFFSET_COMMIT whose offsets partition KIP-848's coordinator runtime verifies with the transaction
         * coordinator first (KIP-890): {@code KafkaApis.handle} returns before the write; the coordinator's answer (a
         * VERIFIED step) runs the verification callback on the coordinator's thread, which enqueues the write there
         * and then (no {@code CallbackRequest}). Exclusive, or pipelined when the scenario has
         * {@link Scenario#transactions}.
         */
        TXN_OFFSET_COMMIT_VERIFIED,
        /** METADATA: pipelined on a pipelined connection, classic on a classic one. */
        METADATA,
        /** API_VERSIONS: pipelined on a pipelined connection, classic on a classic one. */
        API_VERSIONS,
        /** FETCH: exclusive. */
        FETCH,
        /**
         * A request the broker refuses before queueing it (its body does not parse, its API or version is not
         * supported): {@code processCompletedReceives} closes the connection; no response.
         */
        BAD,
        /**
         * SASL_HANDSHAKE on an authenticated connection: SASL re-authentication (KIP-368), handled on the network
         * thread (never queued); its response is the first frame of the re-authentication exchange. The client
         * writes nothing more until re-authentication completes.
         */
        SASL_REAUTH,
        /**
         * The end of the client's input, its last "request": an end of stream (it closed its write side and reads on,
         * a half-close), a frame the network layer refuses (size negative or above {@code socket.request.max.bytes}),
         * or a read that fails. The broker's read throws ({@code KafkaChannel.read}, whose advice offers the close to
         * kpipe first); no response.
         */
        END;

        boolean noResponse() {
            return this == PRODUCE_ACKS_0 || this == BAD || this == END;
        }

        boolean upgrades() {
            return this == PRODUCE_ACKS_ALL
                    || this == PRODUCE_ACKS_1
                    || this == PRODUCE_ACKS_0
                    || this == OFFSET_COMMIT;
        }

        /** @return exclusive whatever the scenario (transactional produce depends on {@link Scenario#exclusive}) */
        boolean exclusive() {
            return this == PRODUCE_EXCLUDED || this == FETCH || this == SASL_REAUTH;
        }

        boolean transactional() {
            return this == PRODUCE_TRANSACTIONAL || this == PRODUCE_TXN_VERIFIED || this == TXN_OFFSET_COMMIT_VERIFIED;
        }

        /** @return true if the broker verifies its transaction first and writes after handle returned (KIP-890) */
        boolean verified() {
            return this == PRODUCE_TXN_VERIFIED || this == TXN_OFFSET_COMMIT_VERIFIED;
        }

        String code() {
            return switch (this) {
                case PRODUCE_ACKS_ALL -> "Pall";
                case PRODUCE_ACKS_1 -> "P1";
                case PRODUCE_ACKS_0 -> "P0";
                case PRODUCE_EXCLUDED -> "Pexcl";
                case PRODUCE_TRANSACTIONAL -> "Ptxn";
                case PRODUCE_TXN_VERIFIED -> "Ptv";
                case OFFSET_COMMIT -> "Oc";
                case TXN_OFFSET_COMMIT_VERIFIED -> "Otv";
                case METADATA -> "Meta";
                case API_VERSIONS -> "ApiV";
                case FETCH -> "Fetch";
                case BAD -> "Bad";
                case SASL_REAUTH -> "Reauth";
                case END -> "End";
            };
        }
    }

    /**
     * One request and how the broker answers it.
     *
     * @param kind the request class
     * @param delayed the response is enqueued later (acks=all purgatory, fetch long poll), not by the handler
     * @param throttled a quota throttle window: StartThrottling precedes the response, EndThrottling follows later
     * @param closeConnection acks=0 only: the broker answers with a CloseConnectionResponse (produce error)
     * @param byTopicId PRODUCE v13 (topic ids, resolved through TopicNames) instead of v12 (names)
     * @param size the size on the wire the broker reports (sizeInBytes), in bytes; 0 for the serialized size
     */
    record Req(Kind kind, boolean delayed, boolean throttled, boolean closeConnection, boolean byTopicId, int size) {
        Req(Kind kind, boolean delayed, boolean throttled, boolean closeConnection, boolean byTopicId) {
            this(kind, delayed, throttled, closeConnection, byTopicId, 0);
        }

        static Req of(Kind kind) {
            return new Req(kind, false, false, false, false, 0);
        }

        /** @return this request, answered later (purgatory) */
        Req later() {
            return new Req(kind, true, throttled, closeConnection, byTopicId, size);
        }

        /** @return this request, with a quota throttle window */
        Req throttle() {
            return new Req(kind, delayed, true, closeConnection, byTopicId, size);
        }

        Req closing() {
            return new Req(kind, delayed, throttled, true, byTopicId, size);
        }

        Req byId() {
            return new Req(kind, delayed, throttled, closeConnection, true, size);
        }

        /** @return this request, reported as {@code bytes} long on the wire */
        Req sized(int bytes) {
            return new Req(kind, delayed, throttled, closeConnection, byTopicId, bytes);
        }

        @Override
        public String toString() {
            return kind.code()
                    + (delayed ? "~" : "")
                    + (throttled ? "!" : "")
                    + (closeConnection ? "X" : "")
                    + (byTopicId ? "#" : "")
                    + (size > 0 ? "@" + size : "");
        }
    }

    /**
     * The broker-wide back pressure given to the coordinator.
     *
     * @param budget the capacity of the global {@link dev.kpipe.backpressure.ByteBudget}, in bytes (low watermark
     *     90 %, as the plugin configures it); 0 for no budget (the 3-argument coordinator)
     * @param pressureWindows how many times the storage side may become saturated (a PRESSURE step each way)
     * @param delayedAdmissions the budget's {@code Waiter.admitted()} callback runs later, as its own ADMIT step (it
     *     runs on the releasing thread, which may be another processor's); else inline
     * @param queueCapacity if positive, the signal is the plugin's {@code BrokerQueuePressure} over the fake's
     *     request queue ({@code queued.max.requests} = this) and purgatory, with the flag as the storage plugin
     * @param maxDelayedProduce the purgatory threshold of {@code BrokerQueuePressure} (0: off)
     * @param tolerateIdleStarvation accept, in a quiescent state, a connection left waiting for budget held only by
     *     idle connections' reservations (a known design limit, counted as "idle-reservation starvation";
     *     see {@code PipelineBudgetScenariosTest#idleConnectionsReservationsStarveAWaiterForever})
     */
    record BackPressure(
            long budget,
            int pressureWindows,
            boolean delayedAdmissions,
            int queueCapacity,
            int maxDelayedProduce,
            boolean tolerateIdleStarvation) {
        static final BackPressure NONE = new BackPressure(0, 0, false, 0, 0, false);

        static BackPressure budget(long capacity) {
            return new BackPressure(capacity, 0, false, 0, 0, false);
        }

        BackPressure pressure(int windows) {
            return new BackPressure(
                    budget, windows, delayedAdmissions, queueCapacity, maxDelayedProduce, tolerateIdleStarvation);
        }

        BackPressure delayed() {
            return new BackPressure(
                    budget, pressureWindows, true, queueCapacity, maxDelayedProduce, tolerateIdleStarvation);
        }

        BackPressure queue(int capacity, int maxDelayed) {
            return new BackPressure(
                    budget, pressureWindows, delayedAdmissions, capacity, maxDelayed, tolerateIdleStarvation);
        }

        BackPressure tolerant() {
            return new BackPressure(budget, pressureWindows, delayedAdmissions, queueCapacity, maxDelayedProduce, true);
        }

        boolean anyPressure() {
            return pressureWindows > 0 || queueCapacity > 0;
        }

        @Override
        public String toString() {
            return (budget > 0 ? "budget=" + budget : "no budget")
                    + (pressureWindows > 0 ? " pressureWindows=" + pressureWindows : "")
                    + (delayedAdmissions ? " delayedAdmissions" : "")
                    + (queueCapacity > 0 ? " queuePressure(" + queueCapacity + "," + maxDelayedProduce + ")" : "")
                    + (tolerateIdleStarvation ? " tolerateIdleStarvation" : "");
        }
    }

    /**
     * Faults injected into what kpipe calls (each throws an {@link IllegalStateException}), and how often.
     *
     * @param topicNamesEvery the broker's topic id resolver ({@code TopicNames}, used to classify PRODUCE v13) throws
     *     on every n-th call; 0 never
     * @param signalEvery the storage-side pressure signal throws on every n-th call; 0 never
     * @param unmuteEvery the processor's {@code unmute} throws on every n-th call, before doing anything; 0 never
     * @param requestOfClient the processor's {@code requestOf} throws for the responses of this client while kpipe
     *     picks the response to process ({@code onResponseReady}); -1 never
     */
    record Faults(int topicNamesEvery, int signalEvery, int unmuteEvery, int requestOfClient) {
        static final Faults NONE = new Faults(0, 0, 0, -1);

        boolean any() {
            return !equals(NONE);
        }

        @Override
        public String toString() {
            return "faults(" + (topicNamesEvery > 0 ? "topicNames every " + topicNamesEvery + " " : "")
                    + (signalEvery > 0 ? "signal every " + signalEvery + " " : "")
                    + (unmuteEvery > 0 ? "unmute every " + unmuteEvery + " " : "")
                    + (requestOfClient >= 0 ? "requestOf for client " + requestOfClient : "") + ")";
        }
    }

    /**
     * One client connection.
     *
     * @param requests what it sends, in order
     * @param depth how many requests it keeps in flight at most (acks=0 ones are done once written)
     * @param mayDisconnect whether the explorer may close it at any point
     */
    record Client(List<Req> requests, int depth, boolean mayDisconnect) {
        @Override
        public String toString() {
            return requests
                    + (depth < Integer.MAX_VALUE ? " depth=" + depth : "")
                    + (mayDisconnect ? " (may disconnect)" : "");
        }
    }

    final int processors;
    final int handlers;
    final int maxInflight;
    final long maxInflightBytes;
    /** One network-thread step runs one micro-step of the run loop (else a whole phase). */
    final boolean fineGrained;

    final List<Client> clients;
    final long seed;
    final BackPressure backPressure;
    final Faults faults;
    /**
     * How many times the config thread may flip {@code kpipe.enable} (a CONFIG step each; starting enabled, the first
     * flip disables, the second enables again, ...), at any point of the run.
     */
    final int enableFlips;
    /**
     * The binding reports deferred dispatch ({@code onInstalled} lists PRODUCE and TXN_OFFSET_COMMIT) and
     * {@code kpipe.transactions.pipelined} is on: transactional produce is pipelined. Otherwise the fake is a broker
     * whose binding lacks those hooks: dispatch is signalled at handle-return, and transactional produce is exclusive.
     */
    final boolean transactions;
    /** Parsed requests, per client, and their correlation ids. */
    final List<List<Parsed>> parsed;

    Scenario(
            int processors,
            int handlers,
            int maxInflight,
            long maxInflightBytes,
            boolean fineGrained,
            List<Client> clients,
            long seed) {
        this.processors = processors;
        this.handlers = handlers;
        this.maxInflight = maxInflight;
        this.maxInflightBytes = maxInflightBytes;
        this.fineGrained = fineGrained;
        this.clients = List.copyOf(clients);
        this.seed = seed;
        this.backPressure = BackPressure.NONE;
        this.faults = Faults.NONE;
        this.enableFlips = 0;
        this.transactions = false;
        this.parsed = new ArrayList<>();
        Random random = new Random(seed);
        for (int c = 0; c < clients.size(); c++) {
            List<Parsed> list = new ArrayList<>();
            Set<Integer> used = new HashSet<>();
            for (Req r : clients.get(c).requests()) {
                int correlationId;
                do {
                    correlationId = random.nextInt();
                } while (!used.add(correlationId));
                list.add(build(connectionId(c), correlationId, r));
            }
            parsed.add(list);
        }
    }

    private Scenario(Scenario s, BackPressure backPressure, Faults faults, int enableFlips) {
        this(s, backPressure, faults, enableFlips, s.transactions);
    }

    private Scenario(Scenario s, BackPressure backPressure, Faults faults, int enableFlips, boolean transactions) {
        this.processors = s.processors;
        this.handlers = s.handlers;
        this.maxInflight = s.maxInflight;
        this.maxInflightBytes = s.maxInflightBytes;
        this.fineGrained = s.fineGrained;
        this.clients = s.clients;
        this.seed = s.seed;
        this.parsed = s.parsed;
        this.backPressure = backPressure;
        this.faults = faults;
        this.enableFlips = enableFlips;
        this.transactions = transactions;
    }

    /** @return this scenario on a broker that reports deferred dispatch: transactional produce is pipelined */
    Scenario withTransactions() {
        return new Scenario(this, backPressure, faults, enableFlips, true);
    }

    /** @return whether kpipe must treat a request of this kind as exclusive in this scenario */
    boolean exclusive(Kind kind) {
        return kind.exclusive() || (kind.transactional() && !transactions);
    }

    /** @return whether a request of this kind upgrades a classic connection in this scenario */
    boolean upgrades(Kind kind) {
        return kind.upgrades() || (kind.transactional() && transactions);
    }

    /** @return this scenario with this back pressure (budget, storage pressure) */
    Scenario with(BackPressure backPressure) {
        return new Scenario(this, backPressure, faults, enableFlips);
    }

    /** @return this scenario with these injected faults */
    Scenario with(Faults faults) {
        return new Scenario(this, backPressure, faults, enableFlips);
    }

    /** @return this scenario, where {@code kpipe.enable} may flip this many times at any point (see {@link #enableFlips}) */
    Scenario withEnableFlips(int flips) {
        return new Scenario(this, backPressure, faults, flips);
    }

    /** @return the size the broker reports for request {@code i} of client {@code c}, in bytes */
    int size(int c, int i) {
        int size = clients.get(c).requests().get(i).size();
        return size > 0 ? size : parsed.get(c).get(i).sizeInBytes();
    }

    /** One processor, two handler threads, the default limits, one client. */
    static Scenario single(Client client) {
        return new Scenario(1, 2, 16, Long.MAX_VALUE, false, List.of(client), 42);
    }

    static Client client(Req... requests) {
        return new Client(List.of(requests), Integer.MAX_VALUE, false);
    }

    static String connectionId(int client) {
        return "127.0.0.1:9092-127.0.0.1:" + (40_000 + client) + "-" + client;
    }

    private static Parsed build(String connectionId, int correlationId, Req r) {
        return switch (r.kind()) {
            case PRODUCE_ACKS_ALL ->
                KafkaRequests.produce(
                        connectionId, correlationId, (short) -1, null, r.byTopicId(), KafkaRequests.INCLUDED);
            case PRODUCE_ACKS_1 ->
                KafkaRequests.produce(
                        connectionId,
                        correlationId,
                        (short) 1,
                        null,
                        r.byTopicId(),
                        KafkaRequests.INCLUDED,
                        KafkaRequests.INCLUDED_2);
            case PRODUCE_ACKS_0 ->
                KafkaRequests.produce(
                        connectionId, correlationId, (short) 0, null, r.byTopicId(), KafkaRequests.INCLUDED);
            case PRODUCE_EXCLUDED ->
                KafkaRequests.produce(
                        connectionId,
                        correlationId,
                        (short) 1,
                        null,
                        r.byTopicId(),
                        KafkaRequests.INCLUDED,
                        KafkaRequests.EXCLUDED);
            case PRODUCE_TRANSACTIONAL, PRODUCE_TXN_VERIFIED ->
                KafkaRequests.produce(
                        connectionId, correlationId, (short) -1, "txn-1", r.byTopicId(), KafkaRequests.INCLUDED);
            case OFFSET_COMMIT -> KafkaRequests.offsetCommit(connectionId, correlationId, correlationId);
            case TXN_OFFSET_COMMIT_VERIFIED ->
                KafkaRequests.txnOffsetCommit(connectionId, correlationId, correlationId);
            case METADATA -> KafkaRequests.metadata(connectionId, correlationId);
            case API_VERSIONS -> KafkaRequests.apiVersions(connectionId, correlationId);
            case FETCH -> KafkaRequests.fetch(connectionId, correlationId);
            case BAD -> KafkaRequests.apiVersions(connectionId, correlationId); // never parsed: the broker refuses it
            case SASL_REAUTH -> KafkaRequests.saslHandshake(connectionId, correlationId);
            case END -> KafkaRequests.apiVersions(connectionId, correlationId); // never read: the read throws
        };
    }

    @Override
    public String toString() {
        return "Scenario{processors=" + processors + ", handlers=" + handlers + ", maxInflight=" + maxInflight
                + (maxInflightBytes < Long.MAX_VALUE ? ", maxInflightBytes=" + maxInflightBytes : "")
                + (fineGrained ? ", fine-grained" : "")
                + (backPressure.equals(BackPressure.NONE) ? "" : ", " + backPressure)
                + (faults.any() ? ", " + faults : "")
                + (enableFlips > 0 ? ", enableFlips=" + enableFlips : "")
                + (transactions ? ", transactions" : "")
                + ", clients=" + clients + "}";
    }
}
