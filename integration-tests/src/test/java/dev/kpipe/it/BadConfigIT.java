// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.harness.NodeExit;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A broker must refuse to start with a bad setting, and say which one. */
class BadConfigIT {
    private static final String INFLIGHT = "kpipe.max.inflight.requests.per.connection";
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(90);
    /** A log4j2 line of the harness's broker pattern: "[timestamp] LEVEL message (logger)". */
    private static final Pattern LOG_LINE = Pattern.compile("\\[[^\\]]+\\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ");

    @Test
    @KafkaCluster(start = false, brokerConfig = INFLIGHT + "=0")
    void zeroInflightLimitStopsStartUp(Cluster cluster) {
        assertFailsNaming(cluster.node(1).startExpectingFailure(EXIT_TIMEOUT), INFLIGHT);
    }

    @Test
    @KafkaCluster(start = false, brokerConfig = INFLIGHT + "=abc")
    void nonNumericInflightLimitStopsStartUp(Cluster cluster) {
        assertFailsNaming(cluster.node(1).startExpectingFailure(EXIT_TIMEOUT), INFLIGHT);
    }

    /** Control case without kpipe: the harness sees a stock broker fail (its client port is taken). */
    @Test
    @KafkaCluster(start = false, installPlugin = false)
    void stockBrokerWhosePortIsTakenStopsStartUp(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        try (ServerSocket taken = new ServerSocket(node.port(), 1, InetAddress.getLoopbackAddress())) {
            assertTrue(taken.isBound());
            assertFailsNaming(node.startExpectingFailure(EXIT_TIMEOUT), "127.0.0.1:" + node.port());
        }
    }

    private static void assertFailsNaming(NodeExit exit, String expected) {
        assertTrue(
                exit.exitCode() > 0 && exit.exitCode() < 128,
                () -> "expected the JVM to exit by itself with an error code, got " + exit.exitCode() + "; log:\n"
                        + exit.log() + "\nconsole:\n" + exit.console());
        // Only errors count: Kafka itself warns about unknown keys such as kpipe.* ("... isn't a known config").
        assertTrue(
                errors(exit.log()).contains(expected),
                () -> "an ERROR in the log should name " + expected + "; log:\n" + exit.log() + "\nconsole:\n"
                        + exit.console());
    }

    /** @return the ERROR lines of a broker log with the lines that follow them (stack traces, causes) */
    static String errors(String log) {
        StringBuilder out = new StringBuilder();
        boolean inError = false;
        for (String line : log.lines().collect(Collectors.toList())) {
            Matcher m = LOG_LINE.matcher(line);
            if (m.lookingAt()) {
                inError = m.group(1).equals("ERROR") || m.group(1).equals("FATAL");
            }
            if (inError) {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }
}
