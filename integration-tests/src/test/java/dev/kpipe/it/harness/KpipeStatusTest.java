// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What the cluster CLI's banner reads of kpipe in a broker log, on lines as kpipe 0.1.0 writes them to Kafka 4.4.0's. */
class KpipeStatusTest {
    private static final String KAFKA =
            "[2026-12-02 06:05:40,115] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)";

    @Test
    void theStartLineMeansRunning() {
        KpipeStatus s = KpipeStatus.of(
                KAFKA + "\n"
                        + "[2026-12-02 06:05:31,402] INFO kpipe 0.1.0 started: Kafka 4.4.0, install mode attach,"
                        + " listeners=[PLAINTEXT], settings {kpipe.enable=true, kpipe.listeners=[]} (dev.kpipe.plugin.KpipeRuntime)\n");
        assertEquals(KpipeStatus.State.RUNNING, s.state());
        assertEquals("kpipe 0.1.0 started: Kafka 4.4.0, install mode attach, listeners=[PLAINTEXT]", s.shortLine());
        assertEquals(List.of(), s.warnings());
    }

    @Test
    void disabledAndWarnings() {
        KpipeStatus s =
                KpipeStatus.of("[2026-12-02 06:05:31,402] WARN kpipe: unknown setting(s) [kpipe.enabled] ignored;"
                        + " kpipe's settings are [kpipe.enable] (dev.kpipe.plugin.KpipeConfig)\n"
                        + "[2026-12-02 06:05:31,403] INFO kpipe 0.1.0 disabled (kpipe.enable=false): Kafka 4.4.0 runs without"
                        + " pipelining (dev.kpipe.plugin.KpipeRuntime)\n" + KAFKA);
        assertEquals(KpipeStatus.State.DISABLED, s.state());
        assertEquals(
                List.of("kpipe: unknown setting(s) [kpipe.enabled] ignored; kpipe's settings are [kpipe.enable]"),
                s.warnings());
    }

    /** The broker JVM forbids attach and has no -javaagent (the line from the local cluster, Kafka 4.4.0). */
    @Test
    void anErrorWithoutStartLineMeansNotRunning() {
        String error = "kpipe cannot attach to the broker JVM (Could not self-attach to current VM using external"
                + " process - set a property net.bytebuddy.agent.attacher.dump to dump the process output to a file at"
                + " the specified location); start it with -javaagent:<kpipe jar> in KAFKA_OPTS; the broker runs"
                + " without pipelining (set kpipe.fail.on.unsupported.broker=true to refuse to start instead)";
        KpipeStatus s = KpipeStatus.of(
                "[2026-12-02 07:01:31,031] ERROR " + error + " (dev.kpipe.plugin.KpipeRuntime)\n" + KAFKA);
        assertEquals(KpipeStatus.State.NOT_RUNNING, s.state());
        assertEquals(error, s.line());
    }

    @Test
    void otherLoggersAndNoKpipeLine() {
        KpipeStatus s =
                KpipeStatus.of(KAFKA + "\n[2026-12-02 06:05:40,116] ERROR kpipe is named here (kafka.server.X)\n");
        assertEquals(KpipeStatus.State.NO_LINE, s.state());
    }
}
