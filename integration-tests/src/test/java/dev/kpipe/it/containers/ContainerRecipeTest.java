// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The container recipe of docs/operations.md is the one the suite runs, and it is complete (no Docker needed): the
 * suite's Dockerfile has the page's instructions word for word; the jar {@code COPY} takes is the build's drop-in jar
 * and the one {@code KAFKA_OPTS} loads as the agent; and Kafka's own {@code KafkaDockerWrapper} (what {@code
 * apache/kafka} runs) turns the page's {@code docker run} environment into the settings of a single node on which
 * consumer groups and transactions work.
 */
class ContainerRecipeTest {
    private static final ContainerRecipe RECIPE = ContainerRecipe.fromDocs();

    @Test
    void theSuitesDockerfileIsThePagesWordForWord() throws Exception {
        Path suite = Path.of(System.getProperty("kpipe.it.container.recipe", "src/test/docker"), "kpipe", "Dockerfile");
        assertEquals(
                ContainerRecipe.instructions(RECIPE.dockerfile()),
                ContainerRecipe.instructions(Files.readAllLines(suite)),
                "docs/operations.md's Dockerfile vs " + suite);
    }

    @Test
    void copyAndTheAgentNameTheBuildsJar() {
        String jar = Path.of(System.getProperty("kpipe.it.plugin.jar", "../plugin/target/kpipe-plugin-0.1.0.jar"))
                .getFileName()
                .toString();
        List<String> copy = ContainerRecipe.instructions(RECIPE.dockerfile()).stream()
                .filter(l -> l.startsWith("COPY "))
                .toList();
        assertEquals(List.of("COPY " + jar + " /opt/kafka/libs/"), copy);
        String opts = RECIPE.env().get("KAFKA_OPTS");
        assertTrue(opts.contains("-javaagent:/opt/kafka/libs/" + jar + " "), opts);
    }

    @Test
    void theSingleNodeHasTheSettingsOfKpipeAndOfAOneReplicaClusterAsKafkasWrapperReadsThem() throws Exception {
        assertEquals("9092:9092", RECIPE.publish());
        assertEquals("my-kafka-kpipe:4.4.0", RECIPE.image());
        TreeSet<String> lines = new TreeSet<>(KpipeContainerEnvTest.wrapperLines(RECIPE.env()));
        for (String line : List.of(
                "metric.reporters=dev.kpipe.plugin.KpipePlugin",
                "kpipe.enable=true",
                "process.roles=broker,controller",
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1")) {
            assertTrue(lines.contains(line), () -> line + " in " + lines);
        }
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("opts=")), "KAFKA_OPTS goes to the JVM: " + lines);
    }

    @Test
    void wordsOfACommandLineKeepQuotedBlanks() {
        assertEquals(
                List.of("-e", "KAFKA_OPTS=-javaagent:a.jar -Xshare:off", "img"),
                ContainerRecipe.words("-e KAFKA_OPTS=\"-javaagent:a.jar -Xshare:off\"   img"));
    }
}
