// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The Kafka image the Testcontainers suite runs, built on this machine with no image registry: kpipe's stand-in for
 * the official {@code apache/kafka} image (recipe: {@code integration-tests/src/test/docker/}).
 *
 * <ol>
 *   <li>Base image {@value #BASE_IMAGE}: a minimal Debian bookworm with a Java 17 runtime, made from Debian's packages
 *       by {@code base-image.sh} (debootstrap, then {@code docker import}; about a minute, root only) when the engine
 *       does not hold it yet, and reused while it does.
 *   <li>Kafka layer {@code kpipe-it/kafka:<version>-<hash>}: the build's Kafka jars from Maven ({@code
 *       target/kafka-<version>/libs}) in {@code /opt/kafka/libs}, the recipe's launch scripts and entrypoint. The tag
 *       is a SHA-256 of the recipe and of every jar's name and bytes, so an image of the same inputs is reused and a
 *       changed jar or script gives a new one; built with Testcontainers' {@link ImageFromDockerfile} (the engine's
 *       build API, nothing pulled). Stock brokers run it.
 *   <li>kpipe layer {@value #KPIPE_REPOSITORY}{@code :<version>-<hash>}: the operator's recipe of {@code
 *       docs/operations.md}, {@code src/test/docker/kpipe/Dockerfile}, built {@code FROM} the Kafka layer: the drop-in
 *       jar copied into {@code /opt/kafka/libs/}. Tagged by a SHA-256 of the Kafka image's id, the recipe and the jar.
 *       kpipe brokers run it.
 * </ol>
 *
 * <p>System property {@value #IMAGE}: {@code local} (the build's default) as above; any other value is an image
 * name the suite runs instead of the Kafka layer (e.g. {@code apache/kafka:4.4.0}, pulled by Testcontainers where a
 * registry is reachable), with the kpipe layer built on it the same way. Resolved once per JVM; thread-safe. The base image's build log is kept in {@code
 * <kpipe.it.work.dir>/containers/base-image.log}.
 */
public final class LocalKafkaImage {
    /** System property: {@code local} (default) or the name of an image to run instead. */
    public static final String IMAGE = "kpipe.it.container.image";
    /** The base image {@code base-image.sh} makes and the recipe's Dockerfile starts {@code FROM}. */
    public static final String BASE_IMAGE = "kpipe-it/debian-jre:bookworm-17";
    /** Repository of the Kafka layer; the tag is {@code <kafka version>-<content hash>}. */
    public static final String REPOSITORY = "kpipe-it/kafka";
    /** Repository of the kpipe layer (the Kafka image plus the drop-in jar); the tag as for {@link #REPOSITORY}. */
    public static final String KPIPE_REPOSITORY = "kpipe-it/kafka-kpipe";

    private static final Logger LOG = LoggerFactory.getLogger(LocalKafkaImage.class);
    /** The most the base image's debootstrap and import may take. */
    private static final long BASE_IMAGE_TIMEOUT_MINUTES = 15;

    private static Resolution resolution;

    private LocalKafkaImage() {}

    /**
     * The images to run, or why there are none.
     *
     * @param image the name of a ready Kafka image (stock brokers), or null
     * @param kpipeImage the name of that image with the kpipe jar in {@code /opt/kafka/libs/} (kpipe brokers), or null
     * @param skipReason why no image could be had (one line), or null
     */
    public record Resolution(String image, String kpipeImage, String skipReason) {
        static Resolution skip(String reason) {
            return new Resolution(null, null, reason);
        }

        /** @return whether an image is ready */
        public boolean ready() {
            return image != null;
        }
    }

    /** @return whether {@value #IMAGE} asks for the local image (unset, empty or {@code local}) */
    public static boolean localRequested() {
        String v = System.getProperty(IMAGE, "local").trim();
        return v.isEmpty() || v.equals("local");
    }

    /**
     * Resolves the image once per JVM: the property's image as it is, or the local image, building what is missing.
     * Needs a reachable Docker engine (call after {@link DockerEngine} found one).
     *
     * @return the image, or the one-line reason why the suite must skip (no base image and none can be made here)
     */
    public static synchronized Resolution resolve() {
        if (resolution == null) {
            Resolution kafka = localRequested()
                    ? buildLocal()
                    : named(System.getProperty(IMAGE).trim());
            resolution = kafka.ready() ? withKpipe(kafka.image()) : kafka;
        }
        return resolution;
    }

    /**
     * Builds the kpipe layer on a Kafka image with the operator's recipe ({@code src/test/docker/kpipe/Dockerfile},
     * build argument {@code KAFKA_IMAGE}), unless an image of the same inputs is present.
     */
    private static Resolution withKpipe(String kafkaImage) {
        Path recipe = recipe().resolve("kpipe");
        Path jar = KpipeContainers.pluginJar();
        DockerClient docker = DockerClientFactory.instance().client();
        String kafkaId = docker.inspectImageCmd(kafkaImage).exec().getId();
        String tag = KPIPE_REPOSITORY + ":" + kafkaVersion() + "-"
                + contentHash(kafkaImage + "@" + kafkaId, List.of(recipe, jar));
        if (present(docker, tag)) {
            LOG.info("kpipe image {} present, reused", tag);
            return new Resolution(kafkaImage, tag, null);
        }
        long start = System.nanoTime();
        new ImageFromDockerfile(tag, false)
                .withFileFromPath("Dockerfile", recipe.resolve("Dockerfile"))
                .withFileFromPath(jar.getFileName().toString(), jar)
                .withBuildArg("KAFKA_IMAGE", kafkaImage)
                .get();
        LOG.info("kpipe image {} built FROM {} in {} s", tag, kafkaImage, seconds(start));
        return new Resolution(kafkaImage, tag, null);
    }

    private static Path recipe() {
        return Path.of(System.getProperty("kpipe.it.container.recipe", "src/test/docker"))
                .toAbsolutePath();
    }

    private static Resolution buildLocal() {
        Path recipe = recipe();
        Path libs = Path.of(System.getProperty("kpipe.it.container.libs", "target/kafka-" + kafkaVersion() + "/libs"))
                .toAbsolutePath();
        if (!Files.isRegularFile(recipe.resolve("kafka/Dockerfile")) || !Files.isDirectory(libs)) {
            return Resolution.skip("no image recipe at " + recipe + " or no Kafka jars at " + libs
                    + " (run through Maven: mvn -B verify)");
        }
        DockerClient docker = DockerClientFactory.instance().client();
        long start = System.nanoTime();
        if (!present(docker, BASE_IMAGE)) {
            Optional<String> failure = runBaseImageScript(recipe.resolve("base-image.sh"));
            if (failure.isPresent()) {
                return Resolution.skip("base image " + BASE_IMAGE + " absent and not buildable here: " + failure.get());
            }
            LOG.info("base image {} made in {} s", BASE_IMAGE, seconds(start));
        }
        String tag = REPOSITORY + ":" + kafkaVersion() + "-" + contentHash("", List.of(recipe.resolve("kafka"), libs));
        if (present(docker, tag)) {
            LOG.info("Kafka image {} present, reused", tag);
            return new Resolution(tag, null, null);
        }
        long layerStart = System.nanoTime();
        Path kafka = recipe.resolve("kafka");
        String built = new ImageFromDockerfile(tag, false)
                .withFileFromPath("Dockerfile", kafka.resolve("Dockerfile"))
                .withFileFromPath("bin", kafka.resolve("bin"))
                .withFileFromPath("docker", kafka.resolve("docker"))
                .withFileFromPath("libs", libs)
                .get();
        LOG.info("Kafka image {} built in {} s", built, seconds(layerStart));
        return new Resolution(tag, null, null);
    }

    /** @return {@code image} once the engine holds it (pulled if a registry can be reached), or why not */
    private static Resolution named(String image) {
        DockerClient docker = DockerClientFactory.instance().client();
        if (present(docker, image)) {
            return new Resolution(image, null, null);
        }
        try {
            LOG.info("pulling {}", image);
            docker.pullImageCmd(image).start().awaitCompletion(10, TimeUnit.MINUTES);
        } catch (RuntimeException e) {
            return Resolution.skip(IMAGE + "=" + image + " cannot be pulled here: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Resolution.skip("interrupted while pulling " + image);
        }
        return present(docker, image)
                ? new Resolution(image, null, null)
                : Resolution.skip(IMAGE + "=" + image + " was not pulled within 10 min");
    }

    private static boolean present(DockerClient docker, String image) {
        try {
            docker.inspectImageCmd(image).exec();
            return true;
        } catch (NotFoundException e) {
            return false;
        }
    }

    /** @return empty when the script made the base image, else its one-line reason */
    private static Optional<String> runBaseImageScript(Path script) {
        Path log = workDir().resolve("base-image.log");
        try {
            Files.createDirectories(log.getParent());
            LOG.info("making base image {} with {} (debootstrap, about a minute; log {})", BASE_IMAGE, script, log);
            Process p = new ProcessBuilder("bash", script.toString(), BASE_IMAGE)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(BASE_IMAGE_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                return Optional.of(
                        script.getFileName() + " did not finish within " + BASE_IMAGE_TIMEOUT_MINUTES + " min");
            }
            if (p.exitValue() == 0) {
                return Optional.empty();
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            String last = lines.stream()
                    .filter(l -> l.startsWith("base-image:"))
                    .reduce((a, b) -> b)
                    .orElse(lines.isEmpty() ? "exit " + p.exitValue() : lines.get(lines.size() - 1));
            return Optional.of(last.replaceFirst("^base-image: ", "") + " (log " + log + ")");
        } catch (IOException e) {
            return Optional.of("cannot run " + script + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while making the base image");
        }
    }

    /**
     * @param prefix text hashed first (e.g. a base image's name and id), may be empty
     * @param roots folders or files
     * @return the first 16 hex digits of a SHA-256 over the prefix and every file under each root (its path from the
     *     root's own name, then its bytes), in path order
     */
    static String contentHash(String prefix, List<Path> roots) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(prefix.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            for (Path root : roots) {
                List<Path> files;
                try (Stream<Path> walk = Files.walk(root)) {
                    files = walk.filter(Files::isRegularFile).sorted().toList();
                }
                for (Path f : files) {
                    sha.update(root.getFileName()
                            .resolve(root.relativize(f))
                            .toString()
                            .getBytes(StandardCharsets.UTF_8));
                    sha.update((byte) 0);
                    sha.update(Files.readAllBytes(f));
                }
            }
            return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the Kafka version of the build ({@code kpipe.it.kafka.version}, set by Maven) */
    static String kafkaVersion() {
        return System.getProperty("kpipe.it.kafka.version", "4.4.0");
    }

    /** @return where the suite keeps container logs and the base image's build log */
    static Path workDir() {
        return Path.of(System.getProperty("kpipe.it.work.dir", "target/it-clusters"))
                .toAbsolutePath()
                .normalize()
                .resolve("containers");
    }

    private static long seconds(long startNanos) {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos);
    }
}
