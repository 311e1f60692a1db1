// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * JUnit 5 condition of the Testcontainers suite: its classes run only where a Docker engine answers and the Kafka
 * image can be had ({@link LocalKafkaImage}: built here, nothing pulled), and are skipped where not, with one line on
 * stderr per skipped class naming it and saying why (the engine and image are looked at once per test JVM).
 *
 * <p>First a quiet look for a Docker endpoint, so that a machine without Docker (CI here) pays nothing and gets no
 * Testcontainers error output: {@code DOCKER_HOST}, Testcontainers' {@code docker.host} / {@code tc.host} (system
 * property or {@code ~/.testcontainers.properties}), and the usual sockets ({@code /var/run/docker.sock}, rootless,
 * Docker Desktop, Colima, Rancher Desktop). If one exists, Testcontainers' own check ({@link
 * DockerClientFactory#isDockerAvailable()}) decides, and logs its reasons when the engine does not answer. On Windows
 * Testcontainers always decides. Before that, Testcontainers' resource reaper must be off ({@code
 * TESTCONTAINERS_RYUK_DISABLED=true}, which the build sets): it runs the {@code testcontainers/ryuk} image, which a
 * host without an image registry cannot pull, so the suite skips instead when the variable is not set and that image
 * is not in the engine. Then the image is resolved (built on the first run, about two minutes), and containers left
 * by a killed earlier run are removed ({@link ContainerLogs#removeOrphans()}).
 *
 * <p>System property {@value #MODE}: {@code auto} (default) as above; {@code true} runs the suite whatever is found (it
 * fails without Docker: for a machine that must run it); {@code false} skips it (one line as well). Thread-safe;
 * evaluated once per JVM.
 */
public final class DockerEngine implements ExecutionCondition {
    /** System property: {@code auto} (default), {@code true} (run, fail without Docker) or {@code false} (skip). */
    public static final String MODE = "kpipe.it.containers";

    private static ConditionEvaluationResult result;
    /** The test classes whose skip was printed. */
    private static final Set<String> announced = new HashSet<>();

    /** Creates the condition; JUnit does this. */
    public DockerEngine() {}

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String mode = System.getProperty(MODE, "auto").trim().toLowerCase(Locale.ROOT);
        if (mode.equals("true")) {
            return ConditionEvaluationResult.enabled(MODE + "=true");
        }
        synchronized (DockerEngine.class) {
            if (result == null) {
                result = switch (mode) {
                    case "false" -> ConditionEvaluationResult.disabled(MODE + "=false");
                    case "auto", "" -> evaluate();
                    default -> throw new IllegalArgumentException(MODE + " must be auto, true or false: " + mode);
                };
            }
            String testClass = context.getRequiredTestClass().getSimpleName();
            if (result.isDisabled() && announced.add(testClass)) {
                System.err.println("kpipe-it: " + testClass + " (Testcontainers suite) skipped: "
                        + result.getReason().orElse("") + " (see docs/containers.md)");
            }
            return result;
        }
    }

    private static ConditionEvaluationResult evaluate() {
        Optional<String> endpoint = endpoint();
        if (endpoint.isEmpty()) {
            return ConditionEvaluationResult.disabled("no Docker engine (DOCKER_HOST unset, no Docker socket)");
        }
        if (!Boolean.parseBoolean(System.getenv("TESTCONTAINERS_RYUK_DISABLED"))
                && !imagePresent("testcontainers/ryuk")) {
            return ConditionEvaluationResult.disabled("TESTCONTAINERS_RYUK_DISABLED is not true and Testcontainers'"
                    + " testcontainers/ryuk image cannot be pulled here (mvn -B verify sets the variable)");
        }
        String hostOverride = System.getenv("TESTCONTAINERS_HOST_OVERRIDE");
        if (Files.exists(Path.of("/.dockerenv"))
                && (hostOverride == null || hostOverride.isBlank())
                && !imagePresent("alpine")) {
            return ConditionEvaluationResult.disabled(
                    "this JVM runs in a container and TESTCONTAINERS_HOST_OVERRIDE is"
                            + " unset: Testcontainers would run an alpine image to find the Docker host (mvn -B verify sets it)");
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            return ConditionEvaluationResult.disabled(
                    "the Docker engine at " + endpoint.get() + " does not answer (Testcontainers logged why)");
        }
        ContainerLogs.removeOrphans();
        LocalKafkaImage.Resolution image = LocalKafkaImage.resolve();
        if (!image.ready()) {
            return ConditionEvaluationResult.disabled(image.skipReason());
        }
        return ConditionEvaluationResult.enabled(
                "Docker engine at " + endpoint.get() + ", images " + image.image() + " and " + image.kpipeImage());
    }

    /**
     * @param repository an image repository, e.g. {@code testcontainers/ryuk}
     * @return whether the engine already holds an image of it (asked with the docker client on {@code PATH}, before
     *     Testcontainers starts); false without a client
     */
    private static boolean imagePresent(String repository) {
        try {
            Process p = new ProcessBuilder("docker", "image", "ls", "-q", repository)
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            return p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0 && !out.isEmpty();
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** @return where a Docker engine may be, without contacting it */
    static Optional<String> endpoint() {
        if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows")) {
            return Optional.of("the Windows named pipe (Testcontainers decides)");
        }
        String dockerHost = System.getenv("DOCKER_HOST");
        if (dockerHost != null && !dockerHost.isBlank()) {
            return Optional.of("DOCKER_HOST=" + dockerHost);
        }
        Properties tc = testcontainersProperties();
        for (String key : List.of("docker.host", "tc.host")) {
            String v = System.getProperty(key, tc.getProperty(key));
            if (v != null && !v.isBlank()) {
                return Optional.of(key + "=" + v);
            }
        }
        for (Path socket : candidateSockets()) {
            if (Files.exists(socket)) {
                return Optional.of(socket.toString());
            }
        }
        return Optional.empty();
    }

    private static List<Path> candidateSockets() {
        List<Path> sockets = new ArrayList<>(List.of(Path.of("/var/run/docker.sock"), Path.of("/run/docker.sock")));
        String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
        if (runtimeDir != null && !runtimeDir.isBlank()) {
            sockets.add(Path.of(runtimeDir, "docker.sock"));
        }
        Path home = Path.of(System.getProperty("user.home", "/"));
        for (String s : List.of(
                ".docker/run/docker.sock",
                ".docker/desktop/docker.sock",
                ".colima/default/docker.sock",
                ".colima/docker.sock",
                ".rd/docker.sock")) {
            sockets.add(home.resolve(s));
        }
        Path runUser = Path.of("/run/user");
        if (Files.isDirectory(runUser)) {
            try (DirectoryStream<Path> users = Files.newDirectoryStream(runUser)) {
                users.forEach(u -> sockets.add(u.resolve("docker.sock")));
            } catch (IOException | SecurityException e) {
                // unreadable: not a rootless Docker of ours
            }
        }
        return sockets;
    }

    private static Properties testcontainersProperties() {
        Properties p = new Properties();
        Path file = Path.of(System.getProperty("user.home", "/"), ".testcontainers.properties");
        if (Files.isRegularFile(file)) {
            try (InputStream in = Files.newInputStream(file)) {
                p.load(in);
            } catch (IOException e) {
                // unreadable: as if absent
            }
        }
        return p;
    }
}
