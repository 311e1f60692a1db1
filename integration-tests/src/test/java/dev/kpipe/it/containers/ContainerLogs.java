// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Network;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.OutputFrame;

/**
 * Housekeeping of the suite's containers, as the child-JVM harness does for broker JVMs: each container's output is
 * kept in {@code <kpipe.it.work.dir>/containers/<test class>-<time>/<name>.log} (the file is written while the
 * container runs, so it survives a failed or killed test), and each container and network carries the label {@value
 * #OWNER_LABEL} with the test JVM's process id, so that the next run removes what a JVM killed without its shutdown
 * hook left behind ({@link #removeOrphans()}). The suite runs with Testcontainers' resource reaper (Ryuk, a pulled
 * image) disabled; its JVM-exit hook and each test's own {@code stop()} remove the containers of a normal run.
 * Thread-safe.
 */
public final class ContainerLogs {
    /** Label on every container and network of the suite: the process id of the test JVM that made it. */
    public static final String OWNER_LABEL = "dev.kpipe.it.owner-pid";

    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private static boolean orphansRemoved;

    private ContainerLogs() {}

    /** @return the label map every container and network of the suite carries */
    public static Map<String, String> labels() {
        return Map.of(OWNER_LABEL, Long.toString(ProcessHandle.current().pid()));
    }

    /**
     * @param testClass the test class the folder is for
     * @return a new folder for that class's container logs (created)
     * @throws UncheckedIOException if it cannot be created
     */
    public static Path folderFor(Class<?> testClass) {
        Path dir = LocalKafkaImage.workDir()
                .resolve(testClass.getSimpleName() + "-" + LocalDateTime.now().format(TS) + "-"
                        + ProcessHandle.current().pid());
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Labels {@code container} and appends its stdout and stderr, line by line as they come, to {@code dir/name.log}.
     *
     * @param container a container not started yet
     * @param dir the folder of the test's logs ({@link #folderFor})
     * @param name the file's base name, e.g. {@code broker-1}
     * @return {@code container}
     */
    public static <T extends GenericContainer<?>> T keep(T container, Path dir, String name) {
        Path file = dir.resolve(name + ".log");
        container.withLabels(labels());
        container.withLogConsumer(new FileConsumer(file));
        return container;
    }

    /**
     * Once per JVM: removes containers and networks labelled {@value #OWNER_LABEL} whose test JVM no longer runs
     * (left by a run killed with {@code kill -9}), saying so on stderr. Never fails: a container another run still
     * uses carries the pid of a live JVM and is kept.
     */
    public static synchronized void removeOrphans() {
        if (orphansRemoved) {
            return;
        }
        orphansRemoved = true;
        DockerClient docker = DockerClientFactory.instance().client();
        try {
            List<Container> containers = docker.listContainersCmd()
                    .withShowAll(true)
                    .withLabelFilter(List.of(OWNER_LABEL))
                    .exec();
            for (Container c : containers) {
                if (!alive(c.getLabels().get(OWNER_LABEL))) {
                    System.err.println("kpipe-it: removing container " + String.join(",", c.getNames())
                            + " left by an earlier run (pid " + c.getLabels().get(OWNER_LABEL) + ")");
                    docker.removeContainerCmd(c.getId())
                            .withForce(true)
                            .withRemoveVolumes(true)
                            .exec();
                }
            }
            for (Network n : docker.listNetworksCmd().exec()) {
                Map<String, String> l = n.getLabels();
                if (l != null && l.containsKey(OWNER_LABEL) && !alive(l.get(OWNER_LABEL))) {
                    System.err.println("kpipe-it: removing network " + n.getName() + " left by an earlier run");
                    docker.removeNetworkCmd(n.getId()).exec();
                }
            }
        } catch (RuntimeException e) {
            System.err.println("kpipe-it: could not remove containers of earlier runs: " + e);
        }
    }

    private static boolean alive(String pid) {
        try {
            return ProcessHandle.of(Long.parseLong(pid))
                    .map(ProcessHandle::isAlive)
                    .orElse(false);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** Appends each frame to a file; called on Testcontainers' log-following thread. */
    private static final class FileConsumer implements Consumer<OutputFrame> {
        private final Path file;

        FileConsumer(Path file) {
            this.file = file;
        }

        @Override
        public synchronized void accept(OutputFrame frame) {
            if (frame.getType() == OutputFrame.OutputType.END) {
                return;
            }
            try (Writer w = Files.newBufferedWriter(
                    file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
                w.write(frame.getUtf8String());
            } catch (IOException e) {
                // a full disk: the container's output stays readable with docker logs while it exists
            }
        }
    }
}
