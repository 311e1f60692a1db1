// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.clients;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Runs an external client (kcat, node, npm, a child JVM) with a time limit. Its output goes to files in a folder of
 * its own (no pipe to fill up), read back when it ends. Public for the tests of other packages (e.g. {@code ops}
 * runs Kafka's JmxTool with it).
 */
public final class ExternalProcess {
    private ExternalProcess() {}

    /**
     * The outcome of a run.
     *
     * @param command what ran
     * @param exitCode its exit code
     * @param stdout everything it printed on standard output
     * @param stderr everything it printed on standard error
     */
    public record Result(List<String> command, int exitCode, String stdout, String stderr) {
        /** @return the command, exit code and standard error (its last 4000 characters), for failure messages */
        public String describe() {
            String err = stderr.length() > 4000 ? "..." + stderr.substring(stderr.length() - 4000) : stderr;
            return String.join(" ", command) + " exited with " + exitCode + "; stderr:\n" + err;
        }

        /**
         * @param prefix a line's start, e.g. {@code RESULT }
         * @return the last line of standard output starting with it
         */
        public Optional<String> lastLine(String prefix) {
            return stdout.lines().filter(l -> l.startsWith(prefix)).reduce((a, b) -> b);
        }
    }

    /**
     * Runs {@code command} and waits for it. On time-out the process tree is killed and the test fails, naming the
     * command and showing its standard error.
     *
     * @param command the program and its arguments
     * @param dir its working directory, also where its output files go (created if missing)
     * @param stdin a file for its standard input, or null for none
     * @param timeout how long it may run
     * @return how it ended
     * @throws IOException if it cannot be started (e.g. the program is not on PATH)
     */
    public static Result run(List<String> command, Path dir, Path stdin, Duration timeout)
            throws IOException, InterruptedException {
        Result r = execute(command, dir, stdin, timeout);
        if (r.exitCode() == TIMED_OUT) {
            fail(String.join(" ", command) + " did not finish within " + timeout.toSeconds() + " s; stderr:\n"
                    + r.stderr());
        }
        return r;
    }

    /** @return this module's build folder ({@code integration-tests/target}): the parent of the test classes */
    public static Path buildDir() {
        try {
            return Path.of(ExternalProcess.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .getParent();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The exit code {@link #execute} reports for a process it killed on time-out. */
    static final int TIMED_OUT = -1;

    /**
     * Like {@link #run} but for checks outside a test (e.g. in an {@code ExecutionCondition}): a time-out is reported
     * as exit code {@link #TIMED_OUT} (the process tree killed), not as a failure.
     */
    static Result execute(List<String> command, Path dir, Path stdin, Duration timeout)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        String name = Path.of(command.get(0)).getFileName().toString();
        Path out = Files.createTempFile(dir, name + "-", ".out");
        Path err = Files.createTempFile(dir, name + "-", ".err");
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .redirectInput(stdin != null ? stdin.toFile() : new File("/dev/null"));
        Process process = pb.start();
        int exit;
        if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            exit = process.exitValue();
        } else {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            exit = TIMED_OUT;
        }
        return new Result(
                command,
                exit,
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }
}
