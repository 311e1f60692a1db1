// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.plugin.classify.PipelinedApi.Switch;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;

/**
 * The {@code kpipe.*} settings, read from the broker's {@code server.properties} (Kafka passes its
 * whole configuration to metric reporters). Declared with Kafka's {@link ConfigDef}: a bad value
 * throws {@link ConfigException} naming the key and the allowed values, which fails broker start-up.
 */
public final class KpipeConfig extends AbstractConfig {

    /** Turns pipelining on. */
    public static final String ENABLE = "kpipe.enable";
    /** Refuse to start on a broker whose hook points kpipe does not know. */
    public static final String FAIL_ON_UNSUPPORTED_BROKER = "kpipe.fail.on.unsupported.broker";
    /** Listener names to pipeline; empty means every broker listener. */
    public static final String LISTENERS = "kpipe.listeners";
    /** Requests read but not yet answered on one pipelined connection. */
    public static final String MAX_INFLIGHT_REQUESTS_PER_CONNECTION = "kpipe.max.inflight.requests.per.connection";
    /** Request bytes read but not yet answered on one pipelined connection. */
    public static final String MAX_INFLIGHT_BYTES_PER_CONNECTION = "kpipe.max.inflight.bytes.per.connection";
    /** Request bytes admitted on all pipelined connections of the broker and not yet answered. */
    public static final String MAX_INFLIGHT_BYTES = "kpipe.max.inflight.bytes";
    /** Produce requests waiting for acks in the purgatory above which pipelined connections pause. */
    public static final String MAX_DELAYED_PRODUCE_REQUESTS = "kpipe.max.delayed.produce.requests";
    /** A {@code dev.kpipe.extension.StoragePressure} implementation reporting storage-side saturation. */
    public static final String STORAGE_PRESSURE_CLASS = "kpipe.storage.pressure.class";
    /** A {@code dev.kpipe.extension.ClassificationPolicy} implementation: which topics' writes may be pipelined. */
    public static final String CLASSIFICATION_POLICY_CLASS = "kpipe.classification.policy.class";
    /** Observing listeners of the broker's network events (the SPI), beside kpipe. */
    public static final String SPI_OBSERVER_CLASSES = "kpipe.spi.observer.classes";
    /** Topics whose produce requests may be pipelined (regex). */
    public static final String TOPICS_INCLUDE = "kpipe.topics.include";
    /** Topics whose produce requests are never pipelined (regex). */
    public static final String TOPICS_EXCLUDE = "kpipe.topics.exclude";
    /** The key of {@link Switch#TRANSACTIONS}, a name for tests and callers; defined with the other switches. */
    public static final String TRANSACTIONS_PIPELINED = Switch.TRANSACTIONS.key();
    /** The key of {@link Switch#OFFSET_COMMITS}, a name for tests and callers; defined with the other switches. */
    public static final String OFFSET_COMMITS_PIPELINED = Switch.OFFSET_COMMITS.key();

    /**
     * Default for {@link #MAX_INFLIGHT_REQUESTS_PER_CONNECTION}: the Java producer keeps at most 5
     * produce requests in flight and sends METADATA and telemetry on the same connection; 16 leaves
     * room for those and for clients that pipeline deeper (librdkafka), while bounding what one
     * connection can park in broker memory.
     */
    public static final int DEFAULT_MAX_INFLIGHT_REQUESTS_PER_CONNECTION = 16;
    /** Default for {@link #MAX_INFLIGHT_BYTES_PER_CONNECTION}: 64 MiB. */
    public static final long DEFAULT_MAX_INFLIGHT_BYTES_PER_CONNECTION = 64L * 1024 * 1024;

    /** Default for {@link #MAX_INFLIGHT_BYTES}: 100 MiB. */
    public static final long DEFAULT_MAX_INFLIGHT_BYTES = 100L * 1024 * 1024;
    /** Default for {@link #MAX_DELAYED_PRODUCE_REQUESTS}. */
    public static final int DEFAULT_MAX_DELAYED_PRODUCE_REQUESTS = 10_000;

    /**
     * The keys that can be changed while the broker runs, through Kafka's dynamic broker config (KIP-226):
     * {@code kafka-configs --bootstrap-server ... --alter --entity-type brokers (--entity-name <id> | --entity-default)
     * --add-config kpipe.enable=false}. The others ({@value #LISTENERS}, {@value #FAIL_ON_UNSUPPORTED_BROKER},
     * {@value #STORAGE_PRESSURE_CLASS}, {@value #CLASSIFICATION_POLICY_CLASS}, {@value #SPI_OBSERVER_CLASSES}) are read at start-up only: Kafka stores a dynamic value for them but never
     * hands it to kpipe. The {@link Switch} keys that are {@link Switch#dynamic()} come last. In definition order.
     */
    public static final Set<String> RECONFIGURABLE_CONFIGS = reconfigurable(
            ENABLE,
            MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
            MAX_INFLIGHT_BYTES_PER_CONNECTION,
            MAX_INFLIGHT_BYTES,
            MAX_DELAYED_PRODUCE_REQUESTS,
            TOPICS_INCLUDE,
            TOPICS_EXCLUDE);

    /**
     * The unit of each setting that counts something, for the settings table of the documentation (generated from
     * {@link #CONFIG_DEF}, {@link #UNITS} and {@link #RECONFIGURABLE_CONFIGS}); a key without a unit is absent.
     */
    public static final Map<String, String> UNITS = Map.of(
            LISTENERS, "listener names",
            MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "requests",
            MAX_INFLIGHT_BYTES_PER_CONNECTION, "bytes",
            MAX_INFLIGHT_BYTES, "bytes",
            MAX_DELAYED_PRODUCE_REQUESTS, "requests");

    /**
     * The definitions of every {@code kpipe.*} key. The documentation strings are the "meaning" column of the
     * README's settings table (generated; see {@code KpipeDocsTest}).
     */
    public static final ConfigDef CONFIG_DEF = new ConfigDef()
            .define(
                    ENABLE,
                    Type.BOOLEAN,
                    false,
                    Importance.HIGH,
                    "Turn pipelining on for the broker listeners. Set to false at runtime: no connection is upgraded any more "
                            + "and every pipelined connection drains (its responses in flight are all written, in order) and "
                            + "becomes classic; true again: connections upgrade on their next produce. A broker started with false "
                            + "installs kpipe's hooks in the background when it is first set to true.")
            .define(
                    FAIL_ON_UNSUPPORTED_BROKER,
                    Type.BOOLEAN,
                    false,
                    Importance.MEDIUM,
                    "Refuse to start when kpipe cannot hook this Kafka version (otherwise: one ERROR, stock behaviour). "
                            + "Applies at start-up only.")
            .define(
                    LISTENERS,
                    Type.LIST,
                    "",
                    Importance.MEDIUM,
                    "Listeners whose connections may be pipelined. Empty: every listener in the broker's listeners (Kafka's "
                            + "default PLAINTEXT if unset) except controller listeners (naming one fails start-up). SASL listeners "
                            + "with re-authentication enabled (connections.max.reauth.ms > 0) are pipelined too (see SASL "
                            + "re-authentication in docs/design.md).")
            .define(
                    MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                    Type.INT,
                    DEFAULT_MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                    Range.between(1, 1000),
                    Importance.MEDIUM,
                    "Requests read on one pipelined connection and not yet answered. The Java producer keeps at most 5 "
                            + "produce requests in flight plus METADATA and telemetry on the same connection; 16 leaves room for "
                            + "those and for clients that pipeline deeper (librdkafka) while bounding what one connection can park "
                            + "in broker memory. A lower value applies from each connection's next read, a higher one from its "
                            + "next written response.")
            .define(
                    MAX_INFLIGHT_BYTES_PER_CONNECTION,
                    Type.LONG,
                    DEFAULT_MAX_INFLIGHT_BYTES_PER_CONNECTION,
                    Range.atLeast(1),
                    Importance.MEDIUM,
                    "Request bytes read on one pipelined connection and not yet answered, checked before each read: the "
                            + "connection reads its next request only while below it (a single larger request is still read when "
                            + "nothing else is in flight). Changes apply as for the request limit.")
            .define(
                    MAX_INFLIGHT_BYTES,
                    Type.LONG,
                    DEFAULT_MAX_INFLIGHT_BYTES,
                    Range.atLeast(1),
                    Importance.MEDIUM,
                    "Broker-wide budget of request bytes admitted on pipelined connections and not yet answered (held from "
                            + "the read until the response is written or the connection closes). Once it is full nothing is "
                            + "admitted until use falls to 90%; a request larger than the whole budget is admitted alone. "
                            + "Changed at runtime, it is resized at once. How connections reserve, wait for it and upgrade: "
                            + "docs/operations.md (the in-flight byte budget).")
            .define(
                    MAX_DELAYED_PRODUCE_REQUESTS,
                    Type.INT,
                    DEFAULT_MAX_DELAYED_PRODUCE_REQUESTS,
                    Range.atLeast(0),
                    Importance.LOW,
                    "Storage-side back pressure: while more produce requests than this wait for acks in the produce "
                            + "purgatory, or the request queue is 80% full (queued.max.requests), no pipelined connection is "
                            + "unmuted (classic connections are unaffected). 0 disables the purgatory check.")
            .define(
                    STORAGE_PRESSURE_CLASS,
                    Type.CLASS,
                    null,
                    Importance.LOW,
                    "A dev.kpipe.extension.StoragePressure (optionally Configurable) through which a storage plugin reports "
                            + "saturation, broker-wide or per topic (only connections producing to a saturated topic wait), in "
                            + "addition to the broker's own queues; it may wake the waiting connections when it clears.")
            .define(
                    CLASSIFICATION_POLICY_CLASS,
                    Type.CLASS,
                    null,
                    Importance.LOW,
                    "A dev.kpipe.extension.ClassificationPolicy (optionally Configurable) that decides which topics' writes "
                            + "may be pipelined, instead of the regular expressions of " + "kpipe.topics.include and "
                            + "kpipe.topics.exclude (the default, RegexClassificationPolicy). Internal topics are never "
                            + "pipelined. A new instance is configured when kpipe.topics.include or kpipe.topics.exclude change.")
            .define(
                    SPI_OBSERVER_CLASSES,
                    Type.LIST,
                    "",
                    Importance.LOW,
                    "dev.kpipe.spi.NetworkEventListener classes, one instance "
                            + "each per broker (configured with the broker's configuration, closed with kpipe), told every event of the pipelined listeners before kpipe; their answers are "
                            + "ignored, a throwable is caught and counted (docs/plugin-authors.md).")
            .define(
                    TOPICS_INCLUDE,
                    Type.STRING,
                    ".*",
                    new RegexValidator(),
                    Importance.MEDIUM,
                    "Produce requests whose every topic matches may be pipelined. Internal topics never are. A change applies "
                            + "to requests read from then on: a pipelined connection that produces to a topic no longer included "
                            + "drains and becomes classic.")
            .define(
                    TOPICS_EXCLUDE,
                    Type.STRING,
                    "",
                    new RegexValidator(),
                    Importance.MEDIUM,
                    "Produce requests naming a matching topic are never pipelined; empty: none. Changes apply as for "
                            + TOPICS_INCLUDE + ".");

    static {
        for (Switch s : Switch.settings()) {
            CONFIG_DEF.define(s.key(), Type.BOOLEAN, s.defaultOn(), Importance.MEDIUM, s.documentation());
        }
    }

    /**
     * @param originals the broker's configuration (other keys are ignored)
     * @throws ConfigException if a {@code kpipe.*} value is invalid; the message names the key
     */
    public KpipeConfig(Map<?, ?> originals) {
        super(CONFIG_DEF, originals, false);
    }

    /**
     * Settings that start with {@code kpipe.} but are not kpipe's (a misspelled key, e.g. {@code kpipe.enabled}): the
     * broker ignores them, as Kafka ignores unknown broker settings, so kpipe names them at start-up. Thread: any.
     *
     * @return the unknown {@code kpipe.*} keys of the broker configuration, sorted; empty if none
     */
    public java.util.SortedSet<String> unknownKeys() {
        java.util.SortedSet<String> unknown = new java.util.TreeSet<>();
        for (String key : originals().keySet()) {
            if (key.startsWith("kpipe.") && !CONFIG_DEF.names().contains(key)) {
                unknown.add(key);
            }
        }
        return unknown;
    }

    /** @return {@value #ENABLE} */
    public boolean enabled() {
        return getBoolean(ENABLE);
    }

    /** @return {@value #FAIL_ON_UNSUPPORTED_BROKER} */
    public boolean failOnUnsupportedBroker() {
        return getBoolean(FAIL_ON_UNSUPPORTED_BROKER);
    }

    /** @return {@value #MAX_INFLIGHT_REQUESTS_PER_CONNECTION} */
    public int maxInflightRequestsPerConnection() {
        return getInt(MAX_INFLIGHT_REQUESTS_PER_CONNECTION);
    }

    /** @return {@value #MAX_INFLIGHT_BYTES_PER_CONNECTION}, in bytes */
    public long maxInflightBytesPerConnection() {
        return getLong(MAX_INFLIGHT_BYTES_PER_CONNECTION);
    }

    /** @return {@value #MAX_INFLIGHT_BYTES}, in bytes */
    public long maxInflightBytes() {
        return getLong(MAX_INFLIGHT_BYTES);
    }

    /** @return {@value #MAX_DELAYED_PRODUCE_REQUESTS} */
    public int maxDelayedProduceRequests() {
        return getInt(MAX_DELAYED_PRODUCE_REQUESTS);
    }

    /** @return the configured {@value #STORAGE_PRESSURE_CLASS}, instantiated and configured, or {@code null} */
    public dev.kpipe.extension.StoragePressure storagePressure() {
        return getConfiguredInstance(STORAGE_PRESSURE_CLASS, dev.kpipe.extension.StoragePressure.class);
    }

    /**
     * @return the configured {@value #CLASSIFICATION_POLICY_CLASS}, instantiated and configured; without one, the
     *     regular expressions of {@value #TOPICS_INCLUDE} and {@value #TOPICS_EXCLUDE}
     */
    public dev.kpipe.extension.ClassificationPolicy classificationPolicy() {
        dev.kpipe.extension.ClassificationPolicy policy =
                getConfiguredInstance(CLASSIFICATION_POLICY_CLASS, dev.kpipe.extension.ClassificationPolicy.class);
        return policy != null
                ? policy
                : new dev.kpipe.extension.RegexClassificationPolicy(topicsInclude(), topicsExclude());
    }

    /**
     * @param s a switch
     * @return its key's value; true for {@link Switch#NONE}
     */
    public boolean isOn(Switch s) {
        return s.key() == null || getBoolean(s.key());
    }

    /** @return the compiled {@value #TOPICS_INCLUDE} */
    public Pattern topicsInclude() {
        return Pattern.compile(getString(TOPICS_INCLUDE));
    }

    /** @return the compiled {@value #TOPICS_EXCLUDE}, or {@code null} when empty */
    public Pattern topicsExclude() {
        String s = getString(TOPICS_EXCLUDE);
        return s.isEmpty() ? null : Pattern.compile(s);
    }

    /**
     * The broker listeners to pipeline: {@value #LISTENERS} if set, else every listener named in
     * the broker's {@code listeners}; never one named in {@code controller.listener.names}.
     *
     * @return listener names, upper case as Kafka normalises them
     * @throws ConfigException if {@value #LISTENERS} names a controller listener
     */
    public Set<String> pipelinedListeners() {
        Set<String> controller = Set.copyOf(upper(listOf(originals().get("controller.listener.names"))));
        List<String> configured = upper(getList(LISTENERS));
        if (!configured.isEmpty()) {
            for (String name : configured) {
                if (controller.contains(name)) {
                    throw new ConfigException(
                            LISTENERS,
                            String.join(",", configured),
                            "controller listener " + name + " cannot be pipelined");
                }
            }
            return Set.copyOf(configured);
        }
        List<String> names = new ArrayList<>();
        // Kafka's default for `listeners` is PLAINTEXT://:9092
        Object listeners = originals().getOrDefault("listeners", "PLAINTEXT://:9092");
        for (String listener : listOf(listeners)) {
            int sep = listener.indexOf("://");
            String name =
                    (sep > 0 ? listener.substring(0, sep) : listener).trim().toUpperCase(Locale.ROOT);
            if (!name.isEmpty() && !controller.contains(name)) {
                names.add(name);
            }
        }
        return Set.copyOf(names);
    }

    /** @return the effective {@code kpipe.*} settings, for the start-up log line */
    public Map<String, Object> effectiveSettings() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : CONFIG_DEF.names().stream().sorted().toList()) {
            out.put(key, get(key));
        }
        return out;
    }

    /** @return the keys, then the keys of the dynamic switches, in that order; unmodifiable */
    private static Set<String> reconfigurable(String... keys) {
        Set<String> all = new java.util.LinkedHashSet<>(List.of(keys));
        for (Switch s : Switch.settings()) {
            if (s.dynamic()) {
                all.add(s.key());
            }
        }
        return java.util.Collections.unmodifiableSet(all);
    }

    private static List<String> listOf(Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof List<?> list) {
            return list.stream().map(String::valueOf).toList();
        }
        List<String> out = new ArrayList<>();
        for (String s : value.toString().split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    private static List<String> upper(List<String> names) {
        return names.stream()
                .map(s -> s.trim().toUpperCase(Locale.ROOT))
                .filter(s -> !s.isEmpty())
                .toList();
    }

    private static final class RegexValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            try {
                Pattern.compile(String.valueOf(value));
            } catch (PatternSyntaxException e) {
                throw new ConfigException(name, value, "not a valid regular expression: " + e.getDescription());
            }
        }

        @Override
        public String toString() {
            return "a Java regular expression";
        }
    }
}
