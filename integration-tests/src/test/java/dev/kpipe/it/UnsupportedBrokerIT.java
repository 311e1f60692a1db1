// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.NodeExit;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A Kafka version kpipe has no binding for (3.7.2, the line before the oldest supported one, KRaft, laid out by
 * kafka-dists): with the jar installed and
 * {@code kpipe.enable=true} the broker logs one ERROR naming the version and the supported ones and runs stock; with
 * {@code kpipe.fail.on.unsupported.broker=true} it refuses to start.
 */
class UnsupportedBrokerIT {
    private static final String VERSION = "3.7.2";
    private static final String PROBLEM =
            "kpipe does not support Kafka " + VERSION + " (supported: 3.8.x, 3.9.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x, 4.4.x)";

    @Test
    @KafkaCluster(kafkaVersion = VERSION)
    void logsOneErrorAndTheBrokerRunsWithoutPipelining(Cluster cluster) throws Exception {
        assertEquals(VERSION, cluster.kafkaVersion());
        String log = cluster.node(1).log();
        List<String> lines = log.lines().filter(l -> l.contains(PROBLEM)).collect(Collectors.toList());
        assertEquals(
                1,
                lines.size(),
                () -> "one line naming the problem, got " + lines + " in "
                        + cluster.node(1).logFile());
        assertTrue(
                lines.get(0).contains(" ERROR ") && lines.get(0).contains("the broker runs without pipelining"),
                lines::toString);
        assertEquals(List.of(), KpipeLog.startedLines(log), "no 'kpipe ... started' line");
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "unsupported", 3, (short) 1, 2_000);
        RoundTrip.consumeAndVerify(cluster, "unsupported", List.of(acks), Duration.ofSeconds(60));
    }

    @Test
    @KafkaCluster(kafkaVersion = VERSION, start = false, brokerConfig = "kpipe.fail.on.unsupported.broker=true")
    void refusesToStartWhenToldTo(Cluster cluster) {
        NodeExit exit = cluster.node(1).startExpectingFailure(Duration.ofSeconds(90));
        assertTrue(
                exit.exitCode() > 0 && exit.exitCode() < 128,
                () -> "the JVM exits by itself with an error code, got " + exit.exitCode() + "; log:\n" + exit.log());
        String errors = BadConfigIT.errors(exit.log());
        assertTrue(
                errors.contains(PROBLEM) && errors.contains("kpipe.fail.on.unsupported.broker=true"),
                () -> "an ERROR naming the problem and the setting; log:\n" + exit.log() + "\nconsole:\n"
                        + exit.console());
    }
}
