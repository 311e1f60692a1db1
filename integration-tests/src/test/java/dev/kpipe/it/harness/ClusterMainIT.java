// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.watchdog.ParentWatchdog;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cluster CLI's brokers stop however the CLI is stopped, not only by Ctrl-C (which signals the whole process group):
 * killed with SIGKILL, the CLI leaves brokers that exit on their own ({@link ParentWatchdog} in each broker JVM); and
 * with {@code --exit-with-parent}, as the {@code -Pcluster} Maven profile runs it, killing only the CLI's parent (Maven;
 * here a shell standing in for it) makes the CLI exit and stop its brokers. Each test starts a one-node cluster in a CLI
 * JVM of its own and asserts that within {@link #BOUND} every node JVM is gone and every port it listened on is free.
 * About 15 s each on a quiet 2-core machine.
 */
class ClusterMainIT {
    /** How long the brokers may take to exit (the watchdog polls every 0.5 s and halts after 10 s of shutdown). */
    private static final Duration BOUND = Duration.ofSeconds(30);

    private static final Pattern NODE_LOG = Pattern.compile("  log (\\S+)/server\\.log$");
    private static final Pattern PORT = Pattern.compile("127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern JMX_PORT = Pattern.compile("-Dcom\\.sun\\.management\\.jmxremote\\.port=(\\d+)");

    private final List<ProcessHandle> started = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        // Only if a test failed: whatever it started and that still runs
        for (ProcessHandle p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @Test
    void killingTheCliWithSigkillStopsItsBrokers() throws Exception {
        Process cli = start(cliCommand(List.of("--nodes", "1")), "killed");
        List<Path> nodeDirs = awaitBanner(cli);
        List<ProcessHandle> nodes = cli.children().collect(Collectors.toList());
        assertTrue(!nodes.isEmpty(), "the CLI runs its node JVMs as children");
        List<Integer> ports = ports(nodeDirs);

        cli.destroyForcibly(); // SIGKILL to this process only: no shutdown hook runs in it

        awaitGone(nodes, ports);
        for (Path dir : nodeDirs) {
            String console = Files.readString(dir.resolve("console.log"));
            assertTrue(
                    console.contains("kpipe-it: the JVM that started it (pid " + cli.pid() + ") is gone"),
                    () -> "the node's watchdog ended it; " + dir + "/console.log:\n" + console);
        }
    }

    @Test
    void killingOnlyTheParentOfTheCliStopsTheCliAndItsBrokers() throws Exception {
        List<String> command = new ArrayList<>(List.of("sh", "-c", "\"$@\" & wait", "sh"));
        command.addAll(cliCommand(List.of("--exit-with-parent", "--nodes", "1")));
        Process parent = start(command, "parent-killed");
        List<Path> nodeDirs = awaitBanner(parent); // the CLI writes to the stdout it inherited from the shell
        ProcessHandle cli = parent.children().findFirst().orElseThrow();
        List<ProcessHandle> nodes = cli.children().collect(Collectors.toList());
        assertTrue(!nodes.isEmpty(), "the CLI runs its node JVMs as children");
        List<Integer> ports = ports(nodeDirs);

        parent.destroyForcibly(); // SIGKILL to the shell only, as when an IDE or a script stops Maven

        List<ProcessHandle> all = new ArrayList<>(nodes);
        all.add(cli);
        awaitGone(all, ports);
    }

    /** @return {@code java ... ClusterMain args} with this JVM's class path and harness settings, logging to a file */
    private static List<String> cliCommand(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(
                HarnessSettings.load().javaExecutable().toString(),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path")));
        System.getProperties().stringPropertyNames().stream()
                .filter(k -> k.startsWith("kpipe.it."))
                .filter(k -> !k.equals("kpipe.it.work.dir") && !k.equals("kpipe.it.test.class"))
                .forEach(k -> cmd.add("-D" + k + "=" + System.getProperty(k)));
        cmd.add("-Dkpipe.it.work.dir=" + HarnessSettings.load().workDir().resolve("ClusterMainIT"));
        // the CLI's own log lines go to target/test-logs/ClusterMainIT-cli.log (it has the test resources too)
        cmd.add("-Dkpipe.it.test.class=ClusterMainIT-cli");
        cmd.add(ClusterMain.class.getName());
        cmd.addAll(args);
        return cmd;
    }

    private Process start(List<String> command, String name) throws IOException {
        Path stderr = Path.of(System.getProperty("kpipe.it.test.logs", "target/test-logs"))
                .resolve("ClusterMainIT-" + name + ".stderr");
        Files.createDirectories(stderr.getParent());
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
                .start();
        p.getOutputStream().close();
        started.add(p.toHandle());
        return p;
    }

    /** Reads the CLI's banner until its last line; @return the node folders it names */
    private static List<Path> awaitBanner(Process p) throws Exception {
        CompletableFuture<List<Path>> banner = CompletableFuture.supplyAsync(() -> {
            List<Path> dirs = new ArrayList<>();
            try {
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    Matcher m = NODE_LOG.matcher(line);
                    if (m.find()) {
                        dirs.add(Path.of(m.group(1)));
                    }
                    if (line.startsWith("Ctrl-C stops the cluster")) {
                        return dirs;
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            throw new IllegalStateException("the CLI's output ended before its banner did");
        });
        return banner.get(HarnessSettings.load().startTimeout().toSeconds() + 60, TimeUnit.SECONDS);
    }

    /** @return every port the nodes listen on: their listeners (client, controller) and JMX */
    private static List<Integer> ports(List<Path> nodeDirs) throws IOException {
        List<Integer> ports = new ArrayList<>();
        for (Path dir : nodeDirs) {
            Properties config = new Properties();
            try (var in = Files.newBufferedReader(dir.resolve("server.properties"))) {
                config.load(in);
            }
            Matcher listener = PORT.matcher(config.getProperty("listeners", ""));
            while (listener.find()) {
                ports.add(Integer.parseInt(listener.group(1)));
            }
            Matcher jmx = JMX_PORT.matcher(Files.readString(dir.resolve("command.txt")));
            assertTrue(jmx.find(), "the node's JMX port in its command line");
            ports.add(Integer.parseInt(jmx.group(1)));
        }
        assertTrue(ports.size() >= 3, () -> "client, controller and JMX ports: " + ports);
        return ports;
    }

    private static void awaitGone(List<ProcessHandle> processes, List<Integer> ports) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (true) {
            List<Long> alive = processes.stream()
                    .filter(ProcessHandle::isAlive)
                    .map(ProcessHandle::pid)
                    .toList();
            List<Integer> busy = ports.stream().filter(p -> !isFree(p)).toList();
            if (alive.isEmpty() && busy.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                fail("after " + BOUND.toSeconds() + " s still running: " + alive + ", ports still in use: " + busy);
            }
            Thread.sleep(200);
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return s.isBound();
        } catch (IOException e) {
            return false;
        }
    }
}
