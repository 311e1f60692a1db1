// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An S1 producer that runs as a child process ({@link BenchClient.Kind#KCAT}, {@link BenchClient.Kind#KAFKAJS}):
 * prepares its tool once per run ({@link #prepare}), starts it against a cluster sending flat out into one partition,
 * and stops it when the round's window ends. Its output goes to files in the round's folder.
 *
 * <ul>
 *   <li>kcat: {@code kcat -P} with {@code acks=all}, the client's idempotence and {@code max.in.flight}, {@code
 *       batch.size} and {@code linger.ms} as S1's Java producer, {@code queue.buffering.max.kbytes} = S1's {@code
 *       buffer.memory}; one record per line on its standard input, fed by a thread of this JVM as fast as kcat reads
 *       (kcat stops reading while librdkafka's queue is full).
 *   <li>KafkaJS {@value #KAFKAJS_VERSION} (npm, installed into {@code integration-tests/target/kafkajs} as {@code
 *       KafkaJsIT} does): {@code kafkajs-load.js}, sends of as many records as fill S1's {@code batch.size}, at most
 *       {@code maxInFlightRequests} + 1 sends outstanding.
 * </ul>
 *
 * <p>Not thread-safe: one round's thread drives it.
 */
final class ClientProcess implements AutoCloseable {
    /** The KafkaJS version the benchmark and {@code KafkaJsIT} run. */
    static final String KAFKAJS_VERSION = "2.2.4";

    private static final String SCRIPT = "kafkajs-load.js";
    private static final Pattern PACKAGE_VERSION = Pattern.compile("\"version\"\\s*:\\s*\"([^\"]+)\"");

    private final Process process;
    private final Thread feeder;
    private final Path dir;

    private ClientProcess(Process process, Thread feeder, Path dir) {
        this.process = process;
        this.feeder = feeder;
        this.dir = dir;
    }

    /**
     * Checks that the client's tool runs here, installing KafkaJS with npm if needed.
     *
     * @param client the client
     * @param buildDir {@code integration-tests/target}
     * @return the tool's version line, e.g. {@code kcat 1.7.1, librdkafka 2.0.2}
     * @throws IllegalStateException saying what is missing and how to get it
     */
    static String prepare(BenchClient client, Path buildDir) throws IOException, InterruptedException {
        return switch (client.kind) {
            case JAVA ->
                "kafka-clients "
                        + java.util.Objects.requireNonNullElse(
                                org.apache.kafka.clients.producer.KafkaProducer.class
                                        .getPackage()
                                        .getImplementationVersion(),
                                "(the runner's)");
            case KCAT -> {
                String v = run(List.of("kcat", "-V"), buildDir, "kcat (Debian package kcat: apt-get install -y kcat)");
                Matcher m =
                        Pattern.compile("Version (\\S+) .*librdkafka (\\S+)").matcher(v);
                yield m.find()
                        ? "kcat " + m.group(1) + ", librdkafka " + m.group(2)
                        : v.lines().findFirst().orElse(v);
            }
            case KAFKAJS -> {
                Path home = buildDir.resolve("kafkajs");
                Files.createDirectories(home);
                String node = run(List.of("node", "--version"), home, "node (Node.js)")
                        .trim();
                if (!KAFKAJS_VERSION.equals(installedKafkaJs(home).orElse(null))) {
                    Files.writeString(
                            home.resolve("package.json"),
                            "{\"name\": \"kpipe-kafkajs\", \"private\": true}\n",
                            StandardCharsets.UTF_8);
                    run(
                            List.of(
                                    "npm",
                                    "install",
                                    "--no-audit",
                                    "--no-fund",
                                    "--no-save",
                                    "--no-package-lock",
                                    "--loglevel=error",
                                    "kafkajs@" + KAFKAJS_VERSION),
                            home,
                            "npm install kafkajs@" + KAFKAJS_VERSION + " (Node.js's npm and its registry)");
                }
                try (InputStream in = ClientProcess.class.getResourceAsStream(SCRIPT)) {
                    Files.copy(in, home.resolve(SCRIPT), StandardCopyOption.REPLACE_EXISTING);
                }
                yield "KafkaJS " + installedKafkaJs(home).orElse("?") + ", node " + node;
            }
        };
    }

    /**
     * Starts the client, sending flat out into partition 0 of the scenario's topic.
     *
     * @param client a kcat or KafkaJS client
     * @param s the scenario (topic, record size, batch size, buffer)
     * @param bootstrap the cluster's {@code bootstrap.servers}
     * @param clientId the client's {@code client.id}
     * @param buildDir {@code integration-tests/target}
     * @param dir the round's folder for the client's output
     * @return the running client
     */
    static ClientProcess start(
            BenchClient client, Scenario s, String bootstrap, String clientId, Path buildDir, Path dir)
            throws IOException {
        Files.createDirectories(dir);
        List<String> cmd = new ArrayList<>();
        if (client.kind == BenchClient.Kind.KCAT) {
            cmd.addAll(List.of("kcat", "-P", "-b", bootstrap, "-t", s.topic, "-p", "0"));
            for (String kv : List.of(
                    "client.id=" + clientId,
                    "acks=all",
                    "enable.idempotence=" + client.idempotent,
                    "max.in.flight=" + client.maxInFlight,
                    "batch.size=" + s.batchBytes,
                    "linger.ms=" + s.lingerMs,
                    "queue.buffering.max.kbytes=" + Math.max(1, s.bufferBytes / 1024))) {
                cmd.add("-X");
                cmd.add(kv);
            }
        } else if (client.kind == BenchClient.Kind.KAFKAJS) {
            Path home = buildDir.resolve("kafkajs");
            cmd.addAll(List.of(
                    "node",
                    home.resolve(SCRIPT).toString(),
                    bootstrap,
                    s.topic,
                    clientId,
                    Integer.toString(s.recordBytes),
                    Integer.toString(Math.max(1, s.batchBytes / s.recordBytes)),
                    Boolean.toString(client.idempotent),
                    Integer.toString(client.maxInFlight)));
        } else {
            throw new IllegalArgumentException("runs in the runner's JVM: " + client.id);
        }
        Files.writeString(dir.resolve("command.txt"), String.join(" ", cmd) + "\n");
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectOutput(dir.resolve("stdout.log").toFile())
                .redirectError(dir.resolve("stderr.log").toFile());
        if (client.kind == BenchClient.Kind.KAFKAJS) {
            pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        }
        Process p = pb.start();
        Thread feeder = null;
        if (client.kind == BenchClient.Kind.KCAT) {
            feeder = new Thread(() -> feed(p.getOutputStream(), s.recordBytes), "bench-kcat-stdin");
            feeder.setDaemon(true);
            feeder.start();
        }
        return new ClientProcess(p, feeder, dir);
    }

    /** Writes records of {@code recordBytes} bytes (a line each, newline excluded) until kcat's input closes. */
    private static void feed(OutputStream stdin, int recordBytes) {
        byte[] line = new byte[recordBytes + 1];
        for (int i = 0; i < recordBytes; i++) {
            line[i] = (byte) ('a' + i % 26);
        }
        line[recordBytes] = '\n';
        byte[] chunk = new byte[line.length * 16];
        for (int i = 0; i < 16; i++) {
            System.arraycopy(line, 0, chunk, i * line.length, line.length);
        }
        try (OutputStream out = stdin) {
            while (!Thread.currentThread().isInterrupted()) {
                out.write(chunk);
            }
        } catch (IOException e) {
            // kcat ended or was stopped: its input is closed
        }
    }

    /** @return whether the client still runs */
    boolean alive() {
        return process.isAlive();
    }

    /** @return the client's exit code and the last lines of its standard error, for an error message */
    String describeExit() {
        String err;
        try {
            List<String> lines = Files.readAllLines(dir.resolve("stderr.log"), StandardCharsets.UTF_8);
            err = String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            err = "(no stderr: " + e.getMessage() + ")";
        }
        return "exit " + (process.isAlive() ? "none yet" : process.exitValue()) + ", stderr: " + err;
    }

    /**
     * @return lines of its standard error that report a failed delivery or a fatal error (kcat: {@code Delivery failed},
     *     {@code % ERROR}; the KafkaJS script: {@code FAILED}); not the clients' logs of errors they retry (KafkaJS logs
     *     a retried {@code COORDINATOR_LOAD_IN_PROGRESS} at ERROR)
     */
    long errorLines() {
        try {
            return Files.readAllLines(dir.resolve("stderr.log"), StandardCharsets.UTF_8).stream()
                    .filter(l -> l.contains("Delivery failed") || l.startsWith("% ERROR") || l.startsWith("FAILED"))
                    .count();
        } catch (IOException e) {
            return 0;
        }
    }

    /** Stops the client (SIGTERM, SIGKILL after 5 s); records it had not sent are dropped. */
    @Override
    public void close() throws InterruptedException {
        if (feeder != null) {
            feeder.interrupt();
        }
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private static Optional<String> installedKafkaJs(Path home) throws IOException {
        Path pkg = home.resolve("node_modules/kafkajs/package.json");
        if (!Files.isRegularFile(pkg)) {
            return Optional.empty();
        }
        Matcher m = PACKAGE_VERSION.matcher(Files.readString(pkg, StandardCharsets.UTF_8));
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** Runs a tool to its end (3 minutes at most) and returns its standard output, or fails saying what is missing. */
    private static String run(List<String> cmd, Path dir, String what) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "--client needs " + what + ": " + cmd.get(0) + " cannot be run (" + e.getMessage() + ")");
        }
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(3, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("--client needs " + what + ": " + String.join(" ", cmd) + " failed: "
                    + out.strip()
                            .lines()
                            .limit(4)
                            .reduce((a, b) -> a + " | " + b)
                            .orElse(""));
        }
        return out;
    }
}
