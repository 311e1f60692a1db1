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
        /** Transactional PRODUCE to an included topic: exclusive. */
        PRODUCE_TRANSACTIONAL,
        /** METADATA: pipelined on a pipelined connection, classic on a classic one. */
        METADATA,
        /** API_VERSIONS: pipelined on a pipelined connection, classic on a classic one. */
        API_VERSIONS,
        /** FETCH: exclusive. */
        FETCH;

        boolean noResponse() {
            return this == PRODUCE_ACKS_0;
        }

        boolean upgrades() {
            return this == PRODUCE_ACKS_ALL || this == PRODUCE_ACKS_1 || this == PRODUCE_ACKS_0;
        }

        boolean exclusive() {
            return this == PRODUCE_EXCLUDED || this == PRODUCE_TRANSACTIONAL || this == FETCH;
        }

        String code() {
            return switch (this) {
                case PRODUCE_ACKS_ALL -> "Pall";
                case PRODUCE_ACKS_1 -> "P1";
                case PRODUCE_ACKS_0 -> "P0";
                case PRODUCE_EXCLUDED -> "Pexcl";
                case PRODUCE_TRANSACTIONAL -> "Ptxn";
                case METADATA -> "Meta";
                case API_VERSIONS -> "ApiV";
                case FETCH -> "Fetch";
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
     */
    record Req(Kind kind, boolean delayed, boolean throttled, boolean closeConnection, boolean byTopicId) {
        static Req of(Kind kind) {
            return new Req(kind, false, false, false, false);
        }

        /** @return this request, answered later (purgatory) */
        Req later() {
            return new Req(kind, true, throttled, closeConnection, byTopicId);
        }

        /** @return this request, with a quota throttle window */
        Req throttle() {
            return new Req(kind, delayed, true, closeConnection, byTopicId);
        }

        Req closing() {
            return new Req(kind, delayed, throttled, true, byTopicId);
        }

        Req byId() {
            return new Req(kind, delayed, throttled, closeConnection, true);
        }

        @Override
        public String toString() {
            return kind.code() + (delayed ? "~" : "") + (throttled ? "!" : "") + (closeConnection ? "X" : "")
                + (byTopicId ? "#" : "");
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
            return requests + (depth < Integer.MAX_VALUE ? " depth=" + depth : "") + (mayDisconnect ? " (may disconnect)" : "");
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
    /** Parsed requests, per client, and their correlation ids. */
    final List<List<Parsed>> parsed = new ArrayList<>();

    Scenario(int processors, int handlers, int maxInflight, long maxInflightBytes, boolean fineGrained,
             List<Client> clients, long seed) {
        this.processors = processors;
        this.handlers = handlers;
        this.maxInflight = maxInflight;
        this.maxInflightBytes = maxInflightBytes;
        this.fineGrained = fineGrained;
        this.clients = List.copyOf(clients);
        this.seed = seed;
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
            case PRODUCE_ACKS_ALL -> KafkaRequests.produce(connectionId, correlationId, (short) -1, null, r.byTopicId(),
                KafkaRequests.INCLUDED);
            case PRODUCE_ACKS_1 -> KafkaRequests.produce(connectionId, correlationId, (short) 1, null, r.byTopicId(),
                KafkaRequests.INCLUDED, KafkaRequests.INCLUDED_2);
            case PRODUCE_ACKS_0 -> KafkaRequests.produce(connectionId, correlationId, (short) 0, null, r.byTopicId(),
                KafkaRequests.INCLUDED);
            case PRODUCE_EXCLUDED -> KafkaRequests.produce(connectionId, correlationId, (short) 1, null, r.byTopicId(),
                KafkaRequests.INCLUDED, KafkaRequests.EXCLUDED);
            case PRODUCE_TRANSACTIONAL -> KafkaRequests.produce(connectionId, correlationId, (short) -1, "txn-1",
                r.byTopicId(), KafkaRequests.INCLUDED);
            case METADATA -> KafkaRequests.metadata(connectionId, correlationId);
            case API_VERSIONS -> KafkaRequests.apiVersions(connectionId, correlationId);
            case FETCH -> KafkaRequests.fetch(connectionId, correlationId);
        };
    }

    @Override
    public String toString() {
        return "Scenario{processors=" + processors + ", handlers=" + handlers + ", maxInflight=" + maxInflight
            + (maxInflightBytes < Long.MAX_VALUE ? ", maxInflightBytes=" + maxInflightBytes : "")
            + (fineGrained ? ", fine-grained" : "") + ", clients=" + clients + "}";
    }
}
