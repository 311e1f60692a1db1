// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The producer client of an S1 run ({@code --client}): the Java producer in the runner's own JVM ({@link LoadRound}),
 * or librdkafka through {@code kcat} and KafkaJS under node, each a child process ({@link ClientProcess}), each with
 * its own name for the setting that bounds its produce requests in flight on one connection. Immutable.
 */
enum BenchClient {
    /** kafka-clients, {@code enable.idempotence=true}, 5 in flight: S1's default producer. */
    JAVA_IDEMPOTENT("java-idempotent", Kind.JAVA, true, 5),
    /** kafka-clients, {@code enable.idempotence=false}, 5 in flight. */
    JAVA("java", Kind.JAVA, false, 5),
    /** librdkafka (kcat), {@code enable.idempotence=true}, 5 in flight (librdkafka's most with idempotence). */
    KCAT_IDEMPOTENT("kcat-idempotent", Kind.KCAT, true, 5),
    /** librdkafka (kcat), not idempotent, 5 in flight. */
    KCAT("kcat", Kind.KCAT, false, 5),
    /** librdkafka (kcat), not idempotent, 100 in flight (above kpipe's default per-connection limit of 16). */
    KCAT_100("kcat-100", Kind.KCAT, false, 100),
    /** KafkaJS, {@code idempotent: true}, {@code maxInFlightRequests: 5}. */
    KAFKAJS_IDEMPOTENT("kafkajs-idempotent", Kind.KAFKAJS, true, 5),
    /** KafkaJS, not idempotent, {@code maxInFlightRequests: 5}. */
    KAFKAJS("kafkajs", Kind.KAFKAJS, false, 5);

    /** How the client runs. */
    enum Kind {
        /** kafka-clients in the runner's JVM. */
        JAVA,
        /** {@code kcat -P} (librdkafka), records on its standard input. */
        KCAT,
        /** KafkaJS under node, records made by the script. */
        KAFKAJS
    }

    final String id;
    final Kind kind;
    final boolean idempotent;
    final int maxInFlight;

    BenchClient(String id, Kind kind, boolean idempotent, int maxInFlight) {
        this.id = id;
        this.kind = kind;
        this.idempotent = idempotent;
        this.maxInFlight = maxInFlight;
    }

    /** @return the client's own name for its in-flight bound, as its documentation spells it */
    String inflightSetting() {
        return switch (kind) {
            case JAVA -> "max.in.flight.requests.per.connection";
            case KCAT -> "max.in.flight";
            case KAFKAJS -> "maxInFlightRequests";
        };
    }

    /** @return e.g. {@code kcat (librdkafka), enable.idempotence=true, max.in.flight=5} */
    String describe() {
        String name = switch (kind) {
            case JAVA -> "Java producer (kafka-clients)";
            case KCAT -> "kcat (librdkafka)";
            case KAFKAJS -> "KafkaJS";
        };
        String idempotence = kind == Kind.KAFKAJS ? "idempotent: " + idempotent : "enable.idempotence=" + idempotent;
        return name + ", " + idempotence + ", " + inflightSetting() + "=" + maxInFlight;
    }

    /**
     * @param list a comma-separated list of client ids, or {@code all}
     * @return the clients, in the order given (all: this enum's order)
     * @throws IllegalArgumentException naming an unknown id and the known ones
     */
    static List<BenchClient> parse(String list) {
        List<BenchClient> out = new ArrayList<>();
        for (String s : list.split(",")) {
            String id = s.trim().toLowerCase(Locale.ROOT);
            if (id.equals("all")) {
                out.addAll(Arrays.asList(values()));
                continue;
            }
            out.add(Arrays.stream(values())
                    .filter(c -> c.id.equals(id))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("--client: unknown client " + s + " (known: "
                            + Arrays.stream(values()).map(c -> c.id).collect(Collectors.joining(", "))
                            + ", all)")));
        }
        return out.stream().distinct().toList();
    }
}
