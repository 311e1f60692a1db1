// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.HarnessSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/** {@link BenchMain}'s pre-flight: checks the kpipe jar and passes options to the harness (main thread, once). */
final class BenchSetup {
    private BenchSetup() {}

    /**
     * Fails early if the drop-in jar is missing or is not the complete shaded jar (e.g. caught while a build rewrites
     * it), which would otherwise only show as a broker dying with NoClassDefFoundError.
     */
    static void checkPluginJar(Path jar) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(
                    "kpipe jar missing at " + jar + ": run mvn -B -q package -DskipTests first");
        }
        try (ZipFile z = new ZipFile(jar.toFile())) {
            for (String entry : List.of(
                    "dev/kpipe/plugin/KpipePlugin.class",
                    "dev/kpipe/interceptor/Interceptor.class",
                    "dev/kpipe/spi/NetworkProcessor.class")) {
                if (z.getEntry(entry) == null) {
                    throw new IllegalStateException("kpipe jar " + jar + " lacks " + entry
                            + " (not the shaded jar, or being rebuilt); rebuild with mvn -B -q package -DskipTests");
                }
            }
        } catch (ZipException e) {
            throw new IllegalStateException(
                    "kpipe jar " + jar + " is not readable (being rebuilt?): " + e.getMessage());
        }
    }

    /** Passes the options that the harness reads from system properties. */
    static void configureHarness(BenchOptions o) {
        HarnessSettings defaults = HarnessSettings.load();
        if (o.kafkaVersion() != null && !o.kafkaVersion().equals(defaults.kafkaVersion())) {
            Path home = Path.of(System.getProperty(
                    "kpipe.it.kafka.home",
                    defaults.kafkaHome()
                            .getParent()
                            .resolve("kafka-" + o.kafkaVersion())
                            .toString()));
            System.setProperty("kpipe.it.kafka.version", o.kafkaVersion());
            System.setProperty("kpipe.it.kafka.home", home.toString());
        }
        List<String> jvm = new ArrayList<>();
        // The initial heap is the maximum, as kafka-server-start.sh runs a broker (KAFKA_HEAP_OPTS="-Xmx1G -Xms1G"):
        // with -Xmx alone, G1 sizes the heap from the first seconds, and a broker whose start differs (the kpipe jar
        // loads more classes: an extra "Metadata GC Threshold" cycle) can keep a smaller heap, collect more often and
        // mark concurrently without end, which S2F measured as broker CPU (docs/benchmark.md, S2F).
        jvm.add("-Xms" + o.brokerHeap());
        if (System.getProperty("kpipe.it.jvm.opts") != null) {
            jvm.add(System.getProperty("kpipe.it.jvm.opts"));
        }
        if (o.brokerJvmOpts() != null) {
            jvm.add(o.brokerJvmOpts());
        }
        if (o.jfr()) {
            jvm.add("-XX:StartFlightRecording=filename=broker.jfr,settings=profile,dumponexit=true");
        }
        if (!jvm.isEmpty()) {
            System.setProperty("kpipe.it.jvm.opts", String.join(" ", jvm));
        }
    }
}
