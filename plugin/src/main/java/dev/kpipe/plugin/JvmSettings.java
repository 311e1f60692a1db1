// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * kpipe's JVM-wide defaults: {@code kpipe.*} settings given to the JVM rather than to a broker, as the arguments of
 * {@code -javaagent:<kpipe jar>=kpipe.enable=true,kpipe.max.inflight.requests.per.connection=8} or as system
 * properties ({@code -Dkpipe.enable=true}; only kpipe's own keys are read from system properties). Every broker of the
 * JVM starts from them, and a broker's own configuration wins key by key. With {@code kpipe.enable=true} among them,
 * every broker of the JVM runs its own kpipe even if its {@code metric.reporters} does not name kpipe: the way to give
 * kpipe to in-process brokers (Kafka's own test harness, {@code KafkaClusterTestKit}, Spring's {@code EmbeddedKafka})
 * without editing the tests.
 *
 * <p>Thread-safety: immutable once the agent has started; read on any thread.
 */
final class JvmSettings {

    private static volatile Map<String, String> agentArguments = Map.of();

    private JvmSettings() {}

    /**
     * Thread: the JVM's agent start ({@code premain}).
     *
     * @param args the agent's argument string: comma-separated {@code key=value} pairs, or {@code null}
     * @throws IllegalArgumentException if a pair has no {@code =}: the message names it
     */
    static void agentArguments(String args) {
        agentArguments = parse(args);
    }

    /**
     * @param args comma-separated {@code key=value} pairs ({@code null} or blank: none); blanks around keys and values
     *     are trimmed
     * @return the pairs, in order
     * @throws IllegalArgumentException if a pair has no {@code =} or an empty key
     */
    static Map<String, String> parse(String args) {
        Map<String, String> out = new LinkedHashMap<>();
        if (args == null || args.isBlank()) {
            return Map.of();
        }
        for (String pair : args.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0 || pair.substring(0, eq).isBlank()) {
                throw new IllegalArgumentException("kpipe: agent argument '" + pair.trim()
                        + "' is not key=value (e.g. -javaagent:kpipe-plugin.jar=kpipe.enable=true)");
            }
            out.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * @param system the system properties
     * @param agent the agent's arguments
     * @return the JVM-wide defaults: kpipe's own keys among the system properties, then the agent's arguments (which
     *     win)
     */
    static Map<String, String> defaults(Properties system, Map<String, String> agent) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : KpipeConfig.CONFIG_DEF.names()) {
            String value = system.getProperty(key);
            if (value != null) {
                out.put(key, value);
            }
        }
        out.putAll(agent);
        return out;
    }

    /** @return this JVM's defaults ({@link #defaults(Properties, Map)}); thread: any */
    static Map<String, String> defaults() {
        return defaults(System.getProperties(), agentArguments);
    }

    /**
     * @param brokerConfig a broker's own configuration
     * @param defaults the JVM-wide defaults
     * @return the defaults overlaid with the broker's configuration (the broker's keys win)
     */
    static Map<String, Object> withDefaults(Map<String, ?> brokerConfig, Map<String, String> defaults) {
        Map<String, Object> out = new LinkedHashMap<>(defaults);
        out.putAll(brokerConfig);
        return out;
    }

    /**
     * @param defaults the JVM-wide defaults
     * @return whether they give every broker of the JVM a kpipe ({@code kpipe.enable=true} among them)
     */
    static boolean everyBroker(Map<String, String> defaults) {
        return "true"
                .equalsIgnoreCase(
                        defaults.getOrDefault(KpipeConfig.ENABLE, "false").trim());
    }
}
