// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * librdkafka's producer through {@code kcat} (Debian package {@code kcat}; {@code .ci/run} installs it) against a
 * kpipe broker with slow acks (see {@link RecordCheck}): {@value #RECORDS} keyed records from standard input, {@code
 * acks=all}, 5 requests in flight, batches of at most 100 records (librdkafka sends one produce request per partition,
 * so several are outstanding at once), spread over the partitions by librdkafka's own partitioner. Read back with the
 * Java consumer: every record once, each partition in the order kcat read the lines, and kcat's connection was
 * pipelined with at least 2 requests in flight at once. With idempotence, and without it but with retries off ({@code
 * message.send.max.retries=0}; kcat cannot show librdkafka's retry counters, so a retry, the only thing that could
 * legitimately reorder records, is ruled out this way: a failed send is a lost record and fails the check).
 *
 * <p>Skipped, with the reason, when kcat is not on PATH.
 */
@ExtendWith(KcatIT.KcatOnPath.class)
@KafkaCluster(
        nodes = 2,
        nodeConfig = {RecordCheck.SLOW_FOLLOWER_FETCH_MIN_BYTES, RecordCheck.SLOW_FOLLOWER_FETCH_WAIT})
class KcatIT {
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 10_000;

    @Test
    void idempotentProducer(Cluster cluster) throws Exception {
        produce(cluster, "kcat-idempotent", List.of("enable.idempotence=true"));
    }

    @Test
    void producerWithoutIdempotence(Cluster cluster) throws Exception {
        produce(cluster, "kcat-plain", List.of("enable.idempotence=false", "message.send.max.retries=0"));
    }

    private static void produce(Cluster cluster, String topic, List<String> settings) throws Exception {
        RecordCheck.createTopic(cluster, topic, PARTITIONS);
        Path dir = cluster.dir().resolve(topic);
        Files.createDirectories(dir);
        Path input = dir.resolve("records.txt");
        try (Writer w = Files.newBufferedWriter(input, StandardCharsets.US_ASCII)) {
            for (int seq = 0; seq < RECORDS; seq++) {
                w.write(RecordFormat.key(seq) + ":" + RecordFormat.value(seq) + "\n");
            }
        }
        List<String> cmd = new ArrayList<>(List.of(
                "kcat",
                "-P",
                "-b",
                cluster.bootstrapServers(),
                "-t",
                topic,
                "-K",
                ":",
                "-X",
                "acks=all",
                "-X",
                "max.in.flight=5",
                "-X",
                "linger.ms=5",
                "-X",
                "batch.num.messages=100"));
        for (String s : settings) {
            cmd.add("-X");
            cmd.add(s);
        }
        String client = "kcat (librdkafka) " + String.join(" ", settings);
        PipeliningProbe probe = PipeliningProbe.start(cluster.node(1));
        long started = System.nanoTime();
        ExternalProcess.Result run = ExternalProcess.run(cmd, dir, input, Duration.ofSeconds(120));
        long ms = (System.nanoTime() - started) / 1_000_000;
        PipeliningProbe.Observation seen = probe.stop();
        assertEquals(0, run.exitCode(), run::describe);
        assertFalse(
                run.stderr().contains("Delivery failed") || run.stderr().contains("Failed to produce"), run::describe);
        PipeliningProbe.assertPipelined(seen, client);
        int[] perPartition = RecordCheck.verify(cluster, topic, PARTITIONS, RECORDS, null);
        System.out.printf(
                "%s: %d records in %d ms, per partition %s; %s%n",
                client, RECORDS, ms, Arrays.toString(perPartition), seen);
    }

    /** Disables the class, before its cluster starts, when {@code kcat -V} cannot be run. */
    static final class KcatOnPath implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            try {
                Path dir = ExternalProcess.buildDir().resolve("kcat");
                ExternalProcess.Result r =
                        ExternalProcess.execute(List.of("kcat", "-V"), dir, null, Duration.ofSeconds(10));
                if (r.exitCode() != 0) {
                    return ConditionEvaluationResult.disabled("kcat -V failed: " + r.describe());
                }
                String version = r.stdout()
                        .lines()
                        .filter(l -> l.startsWith("Version"))
                        .findFirst()
                        .orElse(r.stdout().trim());
                return ConditionEvaluationResult.enabled("kcat: " + version);
            } catch (IOException e) {
                String why = String.valueOf(e.getMessage()).contains("error=2")
                        ? "is not on PATH"
                        : "cannot be run (" + e.getMessage() + ")";
                return ConditionEvaluationResult.disabled("kcat (librdkafka's command-line client) " + why
                        + ": install the Debian package kcat (.ci/run does: apt-get install -y kcat)");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return ConditionEvaluationResult.disabled("interrupted while running kcat -V");
            }
        }
    }
}
