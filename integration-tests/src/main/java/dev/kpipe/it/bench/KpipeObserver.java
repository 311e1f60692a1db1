// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.management.ObjectName;

/**
 * {@code --kpipe-observer}: an SPI observer from {@code examples/} installed on the kpipe side's brokers beside kpipe
 * ({@code kpipe.spi.observer.classes}, its jar in {@code libs/}), as {@code RequestTimingIT} installs it; the stock
 * side is unchanged. The jar is {@code -Dkpipe.bench.observer.jar} (demo.sh sets it), else the example's build output
 * under the working directory.
 */
enum KpipeObserver {
    /** {@code examples/request-timing}: read-to-dispatch and dispatch-to-written times per API, as metrics. */
    REQUEST_TIMING(
            "request-timing",
            "dev.kpipe.examples.timing.RequestTiming",
            "kpipe-example-request-timing",
            "dev.kpipe.examples:type=request-timing-metrics,broker=1,request=Produce");

    /** The system property naming the observer's jar. */
    static final String JAR_PROPERTY = "kpipe.bench.observer.jar";

    final String id;
    final String className;
    private final String artifact;
    private final String leaderProduceMBean;

    KpipeObserver(String id, String className, String artifact, String leaderProduceMBean) {
        this.id = id;
        this.className = className;
        this.artifact = artifact;
        this.leaderProduceMBean = leaderProduceMBean;
    }

    /**
     * @param leader node 1 of the kpipe side
     * @return the produce requests the observer counted on it since the broker started ({@code request-total}), NaN
     *     if it reports none: evidence that it runs
     */
    double produceRequestsCounted(KafkaNode leader) {
        try {
            return ((Number) leader.jmx().getAttribute(new ObjectName(leaderProduceMBean), "request-total"))
                    .doubleValue();
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /**
     * @param v the flag's value
     * @param flag the flag, named in the error
     * @return the observer
     * @throws IllegalArgumentException if {@code v} names none
     */
    static KpipeObserver of(String v, String flag) {
        for (KpipeObserver o : values()) {
            if (o.id.equals(v)) {
                return o;
            }
        }
        throw new IllegalArgumentException(flag + ": unknown observer " + v + " (known: "
                + Arrays.stream(values()).map(o -> o.id).collect(Collectors.joining(", ")) + ")");
    }

    /**
     * @return the observer's jar
     * @throws IllegalStateException naming {@code --kpipe-observer} and what to build if it is not found
     */
    Path jar() {
        String given = System.getProperty(JAR_PROPERTY);
        if (given != null) {
            Path p = Path.of(given);
            if (!Files.isRegularFile(p)) {
                throw new IllegalStateException(
                        "--kpipe-observer " + id + ": " + JAR_PROPERTY + " " + p + " is no file");
            }
            return p;
        }
        Path target = Path.of("examples", id, "target");
        try (Stream<Path> s = Files.isDirectory(target) ? Files.list(target) : Stream.empty()) {
            List<Path> jars = s.filter(p -> p.getFileName().toString().matches(artifact + "-[0-9][^/]*[0-9T]\\.jar"))
                    .toList();
            if (jars.isEmpty()) {
                throw new IllegalStateException("--kpipe-observer " + id + ": no " + artifact + " jar in "
                        + target.toAbsolutePath() + " (build it: mvn -B -q package -DskipTests, or run demo.sh)");
            }
            return jars.get(0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param b the kpipe side's cluster spec
     * @param jar {@link #jar()}
     */
    void install(ClusterSpec.Builder b, Path jar) {
        b.extraLib(jar).brokerConfig("kpipe.spi.observer.classes", className);
    }
}
