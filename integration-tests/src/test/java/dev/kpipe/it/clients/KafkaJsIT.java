// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * KafkaJS {@value #KAFKAJS_VERSION} (npm, installed by this test into {@code integration-tests/target/kafkajs}) against
 * a kpipe broker with slow acks (see {@link RecordCheck}), running {@code clients/kafkajs-produce.js} with node:
 * {@value #RECORDS} records, record {@code seq} to partition {@code seq % 3}, {@code acks=all}, {@code
 * maxInFlightRequests=5}, one produce request per {@code send()}, each {@code send()} started as soon as the previous
 * one's request is written to the socket (KafkaJS itself does not keep concurrent sends in call order; see the
 * script). Read back with the Java consumer: every record once and each partition in send order.
 *
 * <ul>
 *   <li>Without idempotence (retries off, so no retry can reorder records): kpipe had at least 2 of its requests in
 *       flight at once on its connection.
 *   <li>Idempotent: KafkaJS's idempotent producer holds a lock per broker from a produce request until its response
 *       (its EOS manager), so it never has more than one produce request in flight whatever {@code
 *       maxInFlightRequests} says; the test checks order, completeness and that its connection was upgraded.
 * </ul>
 *
 * <p>Skipped, with the reason, when node or npm is not on PATH or {@code npm install kafkajs@}{@value #KAFKAJS_VERSION}
 * fails (e.g. no registry).
 */
@ExtendWith(KafkaJsIT.KafkaJsInstalled.class)
@KafkaCluster(
        nodes = 2,
        nodeConfig = {RecordCheck.SLOW_FOLLOWER_FETCH_MIN_BYTES, RecordCheck.SLOW_FOLLOWER_FETCH_WAIT})
class KafkaJsIT {
    static final String KAFKAJS_VERSION = "2.2.4";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 10_000;
    private static final String SCRIPT = "kafkajs-produce.js";

    @Test
    void producerWithoutIdempotence(Cluster cluster) throws Exception {
        PipeliningProbe.Observation seen = produce(cluster, "kafkajs-plain", false, 100);
        PipeliningProbe.assertPipelined(seen, "KafkaJS (not idempotent)");
    }

    @Test
    void idempotentProducer(Cluster cluster) throws Exception {
        // One request in flight at a time (see the class comment): larger sends keep the run short.
        PipeliningProbe.Observation seen = produce(cluster, "kafkajs-idempotent", true, 1_000);
        PipeliningProbe.assertUpgraded(seen, "KafkaJS (idempotent)");
    }

    private static PipeliningProbe.Observation produce(Cluster cluster, String topic, boolean idempotent, int perSend)
            throws Exception {
        RecordCheck.createTopic(cluster, topic, PARTITIONS);
        Path home = KafkaJsInstalled.home();
        Path script = home.resolve(SCRIPT);
        try (InputStream in = KafkaJsIT.class.getResourceAsStream("/clients/" + SCRIPT)) {
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        List<String> cmd = List.of(
                "node",
                script.toString(),
                cluster.bootstrapServers(),
                topic,
                Integer.toString(PARTITIONS),
                Integer.toString(RECORDS),
                Integer.toString(perSend),
                Boolean.toString(idempotent),
                "5");
        String client = "KafkaJS " + KAFKAJS_VERSION + (idempotent ? " (idempotent)" : " (not idempotent)");
        PipeliningProbe probe = PipeliningProbe.start(cluster.node(1));
        long started = System.nanoTime();
        ExternalProcess.Result run =
                ExternalProcess.run(cmd, cluster.dir().resolve(topic), null, Duration.ofSeconds(120));
        long ms = (System.nanoTime() - started) / 1_000_000;
        PipeliningProbe.Observation seen = probe.stop();
        assertEquals(0, run.exitCode(), run::describe);
        String expected = "RESULT kafkajs=" + KAFKAJS_VERSION + " sent=" + RECORDS + " sends="
                + (RECORDS + perSend - 1) / perSend + " idempotent=" + idempotent + " maxInFlightRequests=5";
        assertEquals(expected, run.lastLine("RESULT ").orElse("no RESULT line"), run::describe);
        int[] perPartition = RecordCheck.verify(cluster, topic, PARTITIONS, RECORDS, seq -> seq % PARTITIONS);
        System.out.printf(
                "%s: %d records in %d sends, run %d ms, per partition %s; %s%n",
                client, RECORDS, (RECORDS + perSend - 1) / perSend, ms, Arrays.toString(perPartition), seen);
        return seen;
    }

    /**
     * Enables the class when node and npm run and KafkaJS {@value #KAFKAJS_VERSION} is installed in {@code
     * target/kafkajs}, installing it there with npm first if needed; otherwise disables it with the reason. Runs before
     * the class's cluster starts.
     */
    static final class KafkaJsInstalled implements ExecutionCondition {
        private static final Pattern VERSION = Pattern.compile("\"version\"\\s*:\\s*\"([^\"]+)\"");

        static Path home() {
            return ExternalProcess.buildDir().resolve("kafkajs");
        }

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            try {
                Path home = home();
                String node = version(List.of("node", "--version"), home);
                if (node.startsWith("!")) {
                    return ConditionEvaluationResult.disabled(node.substring(1));
                }
                if (KAFKAJS_VERSION.equals(installedVersion(home))) {
                    return ConditionEvaluationResult.enabled(
                            "KafkaJS " + KAFKAJS_VERSION + " in " + home + ", node " + node);
                }
                String npm = version(List.of("npm", "--version"), home);
                if (npm.startsWith("!")) {
                    return ConditionEvaluationResult.disabled(npm.substring(1));
                }
                Files.writeString(
                        home.resolve("package.json"),
                        "{\"name\": \"kpipe-kafkajs-it\", \"private\": true}\n",
                        StandardCharsets.UTF_8);
                List<String> install = List.of(
                        "npm",
                        "install",
                        "--no-audit",
                        "--no-fund",
                        "--no-save",
                        "--no-package-lock",
                        "--loglevel=error",
                        "kafkajs@" + KAFKAJS_VERSION);
                ExternalProcess.Result r = ExternalProcess.execute(install, home, null, Duration.ofSeconds(180));
                if (r.exitCode() != 0 || !KAFKAJS_VERSION.equals(installedVersion(home))) {
                    String why = r.exitCode() == ExternalProcess.TIMED_OUT
                            ? "timed out after 180 s"
                            : "exit code " + r.exitCode() + ": "
                                    + r.stderr()
                                            .lines()
                                            .filter(l -> !l.isBlank())
                                            .limit(4)
                                            .map(String::trim)
                                            .collect(Collectors.joining(" | "));
                    return ConditionEvaluationResult.disabled("npm install kafkajs@" + KAFKAJS_VERSION + " into " + home
                            + " failed (npm " + npm + ", " + why + ")");
                }
                return ConditionEvaluationResult.enabled("installed KafkaJS " + KAFKAJS_VERSION + " in " + home);
            } catch (IOException e) {
                return ConditionEvaluationResult.disabled("cannot prepare KafkaJS: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return ConditionEvaluationResult.disabled("interrupted while preparing KafkaJS");
            }
        }

        /** @return the tool's version, or {@code "!"} and why it cannot be run */
        private static String version(List<String> cmd, Path dir) throws InterruptedException, IOException {
            String tool = cmd.get(0);
            try {
                ExternalProcess.Result r = ExternalProcess.execute(cmd, dir, null, Duration.ofSeconds(30));
                return r.exitCode() == 0 ? r.stdout().trim() : "!" + tool + " does not run: " + r.describe();
            } catch (IOException e) {
                String why = String.valueOf(e.getMessage()).contains("error=2")
                        ? " is not on PATH"
                        : " cannot be run (" + e.getMessage() + ")";
                return "!" + tool + why + ": KafkaJS needs Node.js (node and npm)";
            }
        }

        private static String installedVersion(Path home) throws IOException {
            Path pkg = home.resolve("node_modules/kafkajs/package.json");
            if (!Files.isRegularFile(pkg)) {
                return null;
            }
            Matcher m = VERSION.matcher(Files.readString(pkg, StandardCharsets.UTF_8));
            return m.find() ? m.group(1) : null;
        }
    }
}
