// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.plugin.pipeline.ConnectionSnapshot;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.WaitReason;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Formats the connection dump: the text of the JMX attribute {@value KpipeConnections#ATTRIBUTE} of
 * {@value KpipeConnections#MBEAN}. A pure function of the snapshots; no thread of its own.
 *
 * <p>The format (docs/monitoring.md documents it for operators): a first line
 * {@code kpipe connections: N pipelined, M listed (at most L, oldest request in flight first)}, then one line per
 * listed connection of space-separated {@code key=value} fields in a fixed order:
 * <pre>
 * connection=ID listener=NAME principal=P client.id=ID client.software=NAME/VERSION state=PIPELINED|DRAINING
 *   inflight.requests=N inflight.bytes=N held.responses=N oldest.inflight.ms=N|- pipelined.ms=N waiting=R,R|reading
 * </pre>
 * (one line in the dump). Ages are whole milliseconds; {@code -} stands for a value not known (no request in flight,
 * or a connection kpipe took over whose first request it has not read yet). A value with a space, {@code "},
 * {@code \} or {@code =} is quoted ({@code "..."}, with {@code \"} and {@code \\}); control characters become
 * {@code ?}; a value whose escaped text is longer than {@value #MAX_VALUE_CHARS} characters is cut there (never inside
 * an escape or a surrogate pair) and ends with {@code ...}, so one line is at most {@value #MAX_LINE_CHARS} characters
 * whatever the values. If more connections are pipelined than listed, a last line
 * {@code ... K more connections not listed} says how many were left out. Connections are ordered by the age of their oldest request in flight, the oldest first (those with none last,
 * the longest pipelined first among them), so the ones a slow or stuck producer waits on come first.
 */
public final class ConnectionDump {
    /** Connections listed at most. */
    static final int MAX_CONNECTIONS = 100;
    /**
     * Characters of one value's escaped text at most (a long client id or certificate principal), not counting the
     * quotes and the {@code ...} that marks a cut.
     */
    static final int MAX_VALUE_CHARS = 200;
    /**
     * Characters of one connection's line at most, its newline included: 6 text values of at most
     * {@value #MAX_VALUE_CHARS} + 5 characters (quotes and {@code ...}) each, the keys, the numbers at their largest
     * and every wait reason ({@code ConnectionDumpTest} checks the worst case).
     */
    static final int MAX_LINE_CHARS = 1_700;

    private static final Comparator<ConnectionSnapshot> OLDEST_FIRST = Comparator.comparingLong(
                    ConnectionSnapshot::oldestInflightNanos)
            .reversed()
            .thenComparing(
                    Comparator.comparingLong(ConnectionSnapshot::pipelinedNanos).reversed())
            .thenComparing(ConnectionSnapshot::connectionId);

    private ConnectionDump() {}

    /**
     * The connection dump of a coordinator's connections, as the JMX attribute gives it in a broker (at most
     * {@value #MAX_CONNECTIONS} listed): for a benchmark or a tool that holds a coordinator and no MBean server. Thread:
     * any (it reads {@link PipelineCoordinator#connectionSnapshots()}).
     *
     * @param coordinator the connections to list
     * @return the dump's text
     */
    public static String of(PipelineCoordinator<?, ?> coordinator) {
        return format(coordinator.connectionSnapshots(), MAX_CONNECTIONS);
    }

    /**
     * @param connections every connection kpipe owns now
     * @param limit how many to list at most, at least 0
     * @return the dump: at most {@code limit + 2} lines of bounded length, each ending with a newline
     */
    static String format(List<ConnectionSnapshot> connections, int limit) {
        List<ConnectionSnapshot> sorted = new ArrayList<>(connections);
        sorted.sort(OLDEST_FIRST);
        int listed = Math.min(limit, sorted.size());
        StringBuilder out = new StringBuilder(128 + listed * 320);
        out.append("kpipe connections: ")
                .append(sorted.size())
                .append(" pipelined, ")
                .append(listed)
                .append(" listed (at most ")
                .append(limit)
                .append(", oldest request in flight first)\n");
        for (int i = 0; i < listed; i++) {
            line(out, sorted.get(i));
        }
        if (sorted.size() > listed) {
            out.append("... ").append(sorted.size() - listed).append(" more connections not listed\n");
        }
        return out.toString();
    }

    private static void line(StringBuilder out, ConnectionSnapshot c) {
        field(out, "connection", c.connectionId()).append(' ');
        field(out, "listener", c.listener()).append(' ');
        field(out, "principal", c.principal()).append(' ');
        field(out, "client.id", c.clientId()).append(' ');
        field(out, "client.software", c.softwareName() == null ? null : c.softwareName() + "/" + c.softwareVersion())
                .append(' ');
        field(out, "state", c.state()).append(' ');
        out.append("inflight.requests=")
                .append(c.inflightRequests())
                .append(" inflight.bytes=")
                .append(c.inflightBytes())
                .append(" held.responses=")
                .append(c.heldResponses())
                .append(" oldest.inflight.ms=")
                .append(c.oldestInflightNanos() < 0 ? "-" : Long.toString(c.oldestInflightNanos() / 1_000_000))
                .append(" pipelined.ms=")
                .append(c.pipelinedNanos() / 1_000_000)
                .append(" waiting=")
                .append(
                        c.waitReasons().isEmpty()
                                ? "reading"
                                : c.waitReasons().stream()
                                        .sorted()
                                        .map(WaitReason::label)
                                        .collect(Collectors.joining(",")))
                .append('\n');
    }

    private static StringBuilder field(StringBuilder out, String key, String value) {
        out.append(key).append('=');
        if (value == null) {
            return out.append('-');
        }
        boolean quote = value.isEmpty();
        for (int i = 0; i < value.length() && !quote; i++) {
            char ch = value.charAt(i);
            quote = ch == ' ' || ch == '"' || ch == '\\' || ch == '=';
        }
        if (quote) {
            out.append('"');
        }
        int start = out.length();
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            boolean pair = Character.isHighSurrogate(ch)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1));
            int width = ch == '"' || ch == '\\' || pair ? 2 : 1;
            if (out.length() - start + width > MAX_VALUE_CHARS) {
                out.append("...");
                break;
            }
            if (ch == '"' || ch == '\\') {
                out.append('\\').append(ch);
            } else if (pair) {
                out.append(ch).append(value.charAt(++i));
            } else if (Character.isISOControl(ch)) {
                out.append('?');
            } else {
                out.append(ch);
            }
        }
        if (quote) {
            out.append('"');
        }
        return out;
    }
}
