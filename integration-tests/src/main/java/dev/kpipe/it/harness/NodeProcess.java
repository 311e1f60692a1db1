// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static dev.kpipe.it.harness.NodeLogs.firstErrors;
import static dev.kpipe.it.harness.NodeLogs.read;
import static dev.kpipe.it.harness.NodeLogs.size;
import static dev.kpipe.it.harness.NodeLogs.tail;
import static dev.kpipe.it.harness.ReadinessProbe.probeAdmin;
import static dev.kpipe.it.harness.ReadinessProbe.seesBrokers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The child JVM of one {@link KafkaNode}, run after run: launches it (stdout and stderr appended to {@code
 * console.log}), waits for it to become ready or to fail, stops it (SIGTERM, then SIGKILL) or kills it (SIGKILL), and
 * keeps the exit code of its last run and where its logs were when it started.
 *
 * <p>Not thread-safe by itself: every method but {@link #isRunning()}, {@link #pid()}, {@link #logSinceStart()} and
 * {@link #terminate(Duration)} is called under the owning {@link KafkaNode}'s monitor. Waits block the calling thread
 * for at most the given timeouts.
 */
final class NodeProcess {
    /** The node's logger, so that its messages keep their category. */
    private static final Logger LOG = LoggerFactory.getLogger(KafkaNode.class);

    private final KafkaNode node;
    private volatile Process process;
    private long logOffsetAtStart;
    private long consoleOffsetAtStart;
    private Integer lastExitCode;

    NodeProcess(KafkaNode node) {
        this.node = node;
    }

    /** @return whether a JVM was launched and has not been reaped yet (it may have died) */
    boolean launched() {
        return process != null;
    }

    /** @return whether the JVM is running */
    boolean isRunning() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** @return the process id of the running JVM, or -1 if not running */
    long pid() {
        Process p = process;
        return p != null && p.isAlive() ? p.pid() : -1;
    }

    /** @return the exit code of the JVM's last run, or null if it never ended */
    Integer lastExitCode() {
        return lastExitCode;
    }

    /** @return the part of {@code server.log} written since the last launch */
    String logSinceStart() {
        return read(node.logFile(), logOffsetAtStart);
    }

    private String consoleSinceStart() {
        return read(node.consoleFile(), consoleOffsetAtStart);
    }

    /** Marks where {@code server.log} and {@code console.log} end, before {@link #launch} (the new run's start). */
    void markLogs() {
        logOffsetAtStart = size(node.logFile());
        consoleOffsetAtStart = size(node.consoleFile());
    }

    /**
     * Launches the JVM, writing its command line to {@code command.txt}; does not wait for anything.
     *
     * @param cmd the command line ({@link BrokerCommand})
     * @throws UncheckedIOException if it cannot be started
     */
    void launch(List<String> cmd) {
        try {
            Files.createDirectories(node.tmpDir());
            Files.writeString(node.dir().resolve("command.txt"), String.join(" ", cmd) + "\n");
            process = new ProcessBuilder(cmd)
                    .directory(node.dir().toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(
                            ProcessBuilder.Redirect.appendTo(node.consoleFile().toFile()))
                    .start();
            process.getOutputStream().close(); // the broker reads nothing from stdin
        } catch (IOException e) {
            throw new UncheckedIOException("could not start node " + node.id(), e);
        }
        lastExitCode = null;
        LOG.debug("node {} started as pid {}", node.id(), process.pid());
    }

    /**
     * SIGTERM, then SIGKILL (with its descendants) if the JVM has not exited after {@code timeout}.
     *
     * @return the exit code, or -1 if no JVM was launched
     */
    int stop(Duration timeout) {
        Process p = process;
        if (p == null) {
            return -1;
        }
        try {
            if (p.isAlive()) {
                p.destroy();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("node {} did not stop within {} s; killing it", node.id(), timeout.toSeconds());
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                }
            }
            lastExitCode = p.waitFor();
            process = null;
            return lastExitCode;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping node " + node.id(), e);
        }
    }

    /** @return the exit code after SIGKILL of the JVM and its descendants, or -1 if no JVM was launched */
    int kill() {
        Process p = process;
        if (p == null) {
            return -1;
        }
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        try {
            lastExitCode = p.waitFor();
            process = null;
            return lastExitCode;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing node " + node.id(), e);
        }
    }

    /** For the JVM shutdown hook: {@link #terminate(Process, Duration)} without any lock or bookkeeping. */
    void terminate(Duration timeout) {
        terminate(process, timeout);
    }

    /**
     * SIGTERM, wait up to {@code timeout}, then SIGKILL (the process and its descendants); a no-op for {@code null} or a
     * process that has exited. Shared by the broker nodes and the ZooKeeper server.
     *
     * @param p a child JVM, or {@code null}
     * @param timeout how long it may take to exit
     */
    static void terminate(Process p, Duration timeout) {
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until the node answers on its client listener and sees all {@code expectedIds} as registered brokers.
     *
     * @param expectedIds broker ids that must be visible to this node
     * @param timeout how long to wait
     * @throws IllegalStateException if no JVM runs, it exits (message: first errors and log tails) or times out
     */
    void awaitReady(Set<Integer> expectedIds, Duration timeout) {
        Process p = process;
        int id = node.id();
        if (p == null) {
            throw new IllegalStateException("node " + id + " is not running");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        try (Admin probe = probeAdmin(node.bootstrapAddress(), id)) {
            while (true) {
                if (!p.isAlive()) {
                    process = null;
                    lastExitCode = p.exitValue();
                    throw new IllegalStateException("node " + id + " exited with code " + lastExitCode
                            + " during start-up (" + node.logFile() + "); first errors:\n"
                            + firstErrors(logSinceStart(), 12)
                            + "\nlog tail:\n" + tail(logSinceStart(), 40)
                            + "\nconsole tail:\n" + tail(consoleSinceStart(), 20));
                }
                Set<Integer> seen;
                try {
                    seen = seesBrokers(probe, expectedIds);
                } catch (RuntimeException e) {
                    seen = null;
                    last = e;
                }
                if (seen != null) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("node " + id + " not ready within " + timeout.toSeconds()
                            + " s (expected" + " brokers " + expectedIds + ", last error " + last + "); on a loaded"
                            + " machine raise the JVM system property kpipe.it.start.timeout.seconds (./demo.sh:"
                            + " BENCH_JAVA_OPTS=-Dkpipe.it.start.timeout.seconds=400, the local cluster:"
                            + " JAVA_TOOL_OPTIONS=-Dkpipe.it.start.timeout.seconds=400, the tests: mvn -D...); log tail:\n"
                            + tail(logSinceStart(), 40));
                }
                p.waitFor(100, TimeUnit.MILLISECONDS); // pause between probes; returns at once if the JVM dies
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for node " + id, e);
        }
    }

    /**
     * Waits until a JVM expected to fail during start-up exits.
     *
     * @param timeout how long it may take to exit
     * @return its exit code and the log and console output of this run
     * @throws AssertionError if the node becomes ready instead, or still runs after {@code timeout} (it is killed)
     */
    NodeExit awaitFailure(Duration timeout) {
        Process p = process;
        int id = node.id();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Admin probe = probeAdmin(node.bootstrapAddress(), id)) {
            while (true) {
                if (p.waitFor(200, TimeUnit.MILLISECONDS)) {
                    process = null;
                    lastExitCode = p.exitValue();
                    return new NodeExit(lastExitCode, logSinceStart(), consoleSinceStart());
                }
                if (seesBrokers(probe, Set.of(id)) != null) {
                    String tail = tail(logSinceStart(), 40);
                    kill();
                    throw new AssertionError(
                            "node " + id + " started although it was expected to fail; log tail:\n" + tail);
                }
                if (System.nanoTime() > deadline) {
                    String tail = tail(logSinceStart(), 40);
                    kill();
                    throw new AssertionError("node " + id + " was expected to fail but is still running after "
                            + timeout.toSeconds() + " s; log tail:\n" + tail);
                }
            }
        } catch (InterruptedException e) {
            kill();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
