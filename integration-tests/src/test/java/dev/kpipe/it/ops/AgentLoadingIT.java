// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.KpipeLog;
import dev.kpipe.it.RoundTrip;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.harness.NodeExit;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.lang.management.ManagementFactory;
import java.lang.management.RuntimeMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * How kpipe gets into the broker JVM, on whatever Java the brokers run ({@code kpipe.it.broker.java.version}) and in
 * whichever install mode the run uses ({@code kpipe.it.javaagent}): the failsafe executions {@code core-java-25}
 * (self-attach) and {@code core-java-25-javaagent} run it with core classes on JDK 25 brokers, the default execution on
 * the build's JDK 17.
 *
 * <ul>
 *   <li>javaagent mode (the README's install): the start line says {@code install mode javaagent}, the JVM prints no
 *       warning on its console (no JEP 451 warning, no {@code sun.misc.Unsafe} warning from kpipe's Byte Buddy), kpipe
 *       logs only its start line;
 *   <li>attach mode on Java 21 and later: the JVM prints JEP 451's warning, and kpipe adds exactly one WARN saying to
 *       add {@code -javaagent:<jar>} to {@code KAFKA_OPTS}; on Java 17 to 20 nothing is printed;
 *   <li>a JVM started with {@code -XX:-EnableDynamicAgentLoading}: without the agent, one ERROR naming the option and
 *       the {@code -javaagent} to add, and the broker runs stock; with {@code kpipe.fail.on.unsupported.broker=true} it
 *       refuses to start; with the agent, kpipe starts as usual.
 * </ul>
 */
// run again on JDK 25 brokers, by self-attach and with -javaagent (failsafe executions core-java-25*)
@KafkaCluster(nodes = 1)
class AgentLoadingIT {

    /** The first line of JEP 451's warning, as JDK 21 to 25 print it. */
    private static final String JEP_451 = "WARNING: A Java agent has been loaded dynamically";

    private static final String NO_DYNAMIC_LOADING = "-XX:-EnableDynamicAgentLoading";

    @Test
    void theBrokerPrintsOnlyWhatItsInstallModeCalls(Cluster cluster) throws Exception {
        KafkaNode node = cluster.node(1);
        int java = javaFeature(node);
        List<String> started = KpipeLog.startedLines(node.log());
        assertEquals(1, started.size(), () -> "one start line in " + node.logFile() + ": " + started);
        String mode = cluster.javaagent() ? "install mode javaagent" : "install mode attach";
        assertTrue(started.get(0).contains(mode), () -> mode + " in: " + started.get(0));

        List<KpipeLog.LogRecord> kpipe = kpipeRecords(node);
        List<String> console = jvmWarnings(node);
        if (cluster.javaagent() || java < 21) {
            assertEquals(List.of(), console, "nothing on the JVM's console (Java " + java + ", " + mode + ")");
            assertEquals(1, kpipe.size(), () -> "kpipe's start line only: " + kpipe);
        } else {
            assertEquals(1, console.size(), () -> "one JVM warning, JEP 451's: " + console);
            assertTrue(
                    console.get(0).startsWith(JEP_451 + " (" + cluster.pluginJarInLibs() + ")"),
                    () -> "Java " + java + " warns about the attach (JEP 451): " + console);
            assertEquals(2, kpipe.size(), () -> "kpipe's start line and one WARN: " + kpipe);
            KpipeLog.LogRecord warn = kpipe.get(0);
            assertEquals("WARN", warn.level(), warn::text);
            String agent = "-javaagent:" + cluster.pluginJarInLibs();
            assertTrue(
                    warn.text().contains("add " + agent + " to KAFKA_OPTS")
                            && warn.text().contains("JEP 451"),
                    () -> "the WARN says what to add: " + warn.text());
        }
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "agent-loading", 1, (short) 1, 2_000);
        RoundTrip.consumeAndVerify(cluster, "agent-loading", List.of(acks), Duration.ofSeconds(60));
        assertTrue(KpipeJmx.kpipe(node, "pipelined-request-total") > 0, "requests were pipelined");
    }

    /**
     * {@code -XX:-EnableDynamicAgentLoading} forbids what self-attach does (Java 21+, and the Java 17 updates that know
     * the option): kpipe does not try, says so once, and the broker runs stock; with the agent, kpipe runs.
     */
    @Test
    @KafkaCluster(
            nodes = 1,
            start = false,
            kafkaOpts = {NO_DYNAMIC_LOADING})
    void aJvmThatForbidsDynamicLoadingGetsOneErrorOrTheAgent(Cluster cluster) throws Exception {
        assumeJvmKnows(cluster, NO_DYNAMIC_LOADING);
        cluster.start();
        KafkaNode node = cluster.node(1);
        List<KpipeLog.LogRecord> kpipe = kpipeRecords(node);
        if (cluster.javaagent()) {
            List<String> started = KpipeLog.startedLines(node.log());
            assertEquals(1, started.size(), () -> "one start line: " + started);
            assertTrue(started.get(0).contains("install mode javaagent"), started.get(0));
            assertEquals(1, kpipe.size(), () -> "kpipe's start line only: " + kpipe);
        } else {
            assertEquals(List.of(), KpipeLog.startedLines(node.log()), "kpipe did not start");
            assertEquals(1, kpipe.size(), () -> "one kpipe record: " + kpipe);
            KpipeLog.LogRecord error = kpipe.get(0);
            assertEquals("ERROR", error.level(), error::text);
            assertTrue(
                    error.text().contains(NO_DYNAMIC_LOADING)
                            && error.text().contains("-javaagent:" + cluster.pluginJarInLibs() + " in KAFKA_OPTS"),
                    () -> "the ERROR names the option and what to add: " + error.text());
            assertFalse(
                    node.jmx().isRegistered(new ObjectName(KpipeJmx.KPIPE_MBEAN)), "no kpipe metrics: not installed");
        }
        assertEquals(List.of(), jvmWarnings(node), "nothing on the JVM's console");
        RoundTrip.Acks acks = RoundTrip.produce(cluster, "no-dynamic-loading", 1, (short) 1, 1_000);
        RoundTrip.consumeAndVerify(cluster, "no-dynamic-loading", List.of(acks), Duration.ofSeconds(60));
    }

    @Test
    @KafkaCluster(
            nodes = 1,
            start = false,
            kafkaOpts = {NO_DYNAMIC_LOADING},
            brokerConfig = "kpipe.fail.on.unsupported.broker=true")
    void aJvmThatForbidsDynamicLoadingRefusesToStartWhenToldTo(Cluster cluster) throws Exception {
        Assumptions.assumeFalse(cluster.javaagent(), "with -javaagent the broker starts (previous test)");
        assumeJvmKnows(cluster, NO_DYNAMIC_LOADING);
        NodeExit exit = cluster.node(1).startExpectingFailure(Duration.ofSeconds(90));
        assertTrue(
                exit.exitCode() > 0 && exit.exitCode() < 128,
                () -> "the JVM exits by itself with an error code, got " + exit.exitCode() + "; log:\n" + exit.log());
        assertTrue(
                KpipeLog.records(exit.log()).stream()
                        .anyMatch(r -> r.level().equals("ERROR")
                                && r.text().contains(NO_DYNAMIC_LOADING)
                                && r.text().contains("kpipe.fail.on.unsupported.broker=true")),
                () -> "an ERROR naming the option and the setting; log:\n" + exit.log());
    }

    /** Skips where the brokers' {@code java} does not know the option (Java 17 builds before it was added). */
    private static void assumeJvmKnows(Cluster cluster, String option) throws Exception {
        Process p = new ProcessBuilder(cluster.settings().javaExecutable().toString(), option, "-version")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "java -version ended");
        Assumptions.assumeTrue(p.exitValue() == 0, () -> "the brokers' java does not know " + option + ": " + out);
    }

    private static List<KpipeLog.LogRecord> kpipeRecords(KafkaNode node) {
        return KpipeLog.records(node.log()).stream()
                .filter(KpipeLog.LogRecord::fromKpipe)
                .toList();
    }

    /**
     * @return the warnings the JVM itself printed on the broker's console (stdout and stderr), one entry per warning
     *     (its {@code WARNING:} lines joined), except those about Kafka's own classes: on Java 24 and later Kafka 4.4.0
     *     makes the JVM print one about {@code sun.misc.Unsafe::invokeCleaner} ({@code
     *     org.apache.kafka.common.utils.internals.ByteBufferUnmapper}) when it first unmaps an index file, usually at
     *     shutdown, stock or not
     */
    private static List<String> jvmWarnings(KafkaNode node) {
        List<String> warnings = new ArrayList<>();
        for (String line : (Iterable<String>) node.console().lines()::iterator) {
            if (!line.startsWith("WARNING:")) {
                continue;
            }
            boolean starts = line.startsWith(JEP_451) || line.startsWith("WARNING: A terminally deprecated method");
            if (starts || warnings.isEmpty()) {
                warnings.add(line);
            } else {
                warnings.set(warnings.size() - 1, warnings.get(warnings.size() - 1) + "\n" + line);
            }
        }
        warnings.removeIf(w -> w.contains("org.apache.kafka.") && !w.contains("dev.kpipe"));
        return warnings;
    }

    private static int javaFeature(KafkaNode node) throws Exception {
        RuntimeMXBean runtime = ManagementFactory.newPlatformMXBeanProxy(
                node.jmx(), ManagementFactory.RUNTIME_MXBEAN_NAME, RuntimeMXBean.class);
        return Integer.parseInt(runtime.getSpecVersion().split("\\.")[0]);
    }
}
