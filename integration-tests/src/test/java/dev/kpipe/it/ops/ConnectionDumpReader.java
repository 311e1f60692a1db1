// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import javax.management.ObjectName;

/**
 * Reads kpipe's connection dump ({@value #MBEAN}, attribute {@value #ATTRIBUTE}) from a node over JMX and parses its
 * lines into {@code key -> value} maps, as docs/monitoring.md describes the format.
 */
final class ConnectionDumpReader {
    static final String MBEAN = "kafka.server:type=kpipe-connections";
    static final String ATTRIBUTE = "connection-dump";

    private ConnectionDumpReader() {}

    /**
     * @param node a running node with kpipe
     * @return the dump's text, as one JMX read returns it
     * @throws Exception if JMX fails
     */
    static String read(KafkaNode node) throws Exception {
        return (String) node.jmx().getAttribute(new ObjectName(MBEAN), ATTRIBUTE);
    }

    /**
     * @param dump the dump's text
     * @return one map per connection line ({@code connection=...}), fields in the dump's order, values unquoted
     */
    static List<Map<String, String>> connections(String dump) {
        List<Map<String, String>> out = new ArrayList<>();
        for (String line : dump.split("\n")) {
            if (line.startsWith("connection=")) {
                out.add(fields(line));
            }
        }
        return out;
    }

    /**
     * @param line one connection line
     * @return its fields: {@code key=value} separated by spaces, a value quoted if it has a space, {@code "}, {@code \}
     *     or {@code =} ({@code \"} and {@code \\} inside)
     */
    static Map<String, String> fields(String line) {
        Map<String, String> out = new LinkedHashMap<>();
        int i = 0;
        while (i < line.length()) {
            int eq = line.indexOf('=', i);
            String key = line.substring(i, eq);
            StringBuilder v = new StringBuilder();
            int j = eq + 1;
            if (j < line.length() && line.charAt(j) == '"') {
                j++;
                while (line.charAt(j) != '"') {
                    if (line.charAt(j) == '\\') {
                        j++;
                    }
                    v.append(line.charAt(j++));
                }
                j++;
            } else {
                while (j < line.length() && line.charAt(j) != ' ') {
                    v.append(line.charAt(j++));
                }
            }
            out.put(key, v.toString());
            i = j + 1;
        }
        return out;
    }

    /**
     * Reads the dump every 20 ms until a connection line with this client id satisfies the condition.
     *
     * @return that connection's fields
     * @throws AssertionError with the last dump if it does not happen within the timeout
     */
    static Map<String, String> await(
            KafkaNode node, String clientId, String what, Duration timeout, Predicate<Map<String, String>> condition)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String dump;
        do {
            dump = read(node);
            for (Map<String, String> c : connections(dump)) {
                if (clientId.equals(c.get("client.id")) && condition.test(c)) {
                    return c;
                }
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("not within " + timeout + ": " + what + "; last dump:\n" + dump);
    }

    /**
     * Reads the dump every 50 ms until no connection line has this client id.
     *
     * @throws AssertionError with the last dump if it does not happen within the timeout
     */
    static void awaitGone(KafkaNode node, String clientId, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String dump;
        do {
            dump = read(node);
            if (connections(dump).stream().noneMatch(c -> clientId.equals(c.get("client.id")))) {
                return;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("connection of " + clientId + " still listed after " + timeout + ":\n" + dump);
    }
}
