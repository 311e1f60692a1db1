// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Without Docker: the environment {@link KpipeContainerIT} gives the image becomes the intended {@code
 * server.properties}, checked with the very code the official image runs at start ({@code
 * kafka.docker.KafkaDockerWrapper.getServerConfigsFromEnv} of the build's Kafka, on the test class path); and kpipe's
 * local image's entrypoint, a shell script, makes the same lines of the same environment.
 */
class KpipeContainerEnvTest {
    /** A name only: these containers are never started. */
    private static final DockerImageName IMAGE = DockerImageName.parse("apache/kafka:4.4.0");

    @Test
    void environmentMapsToTheKpipeInstallLinesAndKraftSingleNode() throws Exception {
        Properties attach = serverProperties(KpipeContainers.broker(IMAGE, false));
        assertEquals("dev.kpipe.plugin.KpipePlugin", attach.getProperty("metric.reporters"));
        assertEquals("true", attach.getProperty("kpipe.enable"));
        assertEquals("16", attach.getProperty("kpipe.max.inflight.requests.per.connection"));
        assertEquals("1", attach.getProperty("node.id"), "Testcontainers' single-node KRaft settings");
        assertEquals("broker,controller", attach.getProperty("process.roles"));
        assertTrue(attach.getProperty("listeners", "").contains("CONTROLLER://"), attach.getProperty("listeners"));
        assertEquals("CONTROLLER", attach.getProperty("controller.listener.names"));

        Properties agent = serverProperties(KpipeContainers.broker(IMAGE, true));
        assertEquals("true", agent.getProperty("kpipe.enable"));
        assertEquals(null, agent.getProperty("opts"), "KAFKA_OPTS is a JVM option, not a broker setting");
        assertTrue(KpipeContainers.kpipeEnv(true)
                .get("KAFKA_OPTS")
                .startsWith("-javaagent:/opt/kafka/libs/kpipe-plugin-"));
    }

    /**
     * The entrypoint of kpipe's local image ({@code src/test/docker/kafka/docker/run}, run here with {@code bash
     * --print-config}) gives the very lines Kafka's {@code KafkaDockerWrapper} gives for the same environment: the
     * suite's two variants' environments and names that exercise each rule (double and triple underscores, the JVM and
     * logging variables that are not broker settings, variables without the {@code KAFKA_} prefix).
     */
    @Test
    void localImageEntrypointMapsTheEnvironmentAsKafkasOwnWrapper() throws Exception {
        Path run =
                Path.of(System.getProperty("kpipe.it.container.recipe", "src/test/docker"), "kafka", "docker", "run");
        assertTrue(Files.isRegularFile(run), () -> "entrypoint at " + run.toAbsolutePath());
        Map<String, String> env =
                new TreeMap<>(KpipeContainers.broker(IMAGE, true).getEnvMap());
        env.put("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://127.0.0.1:19092,BROKER://kafka-1:9093");
        env.put("KAFKA_LISTENER_NAME_BROKER_SCRAM___SHA___256_SASL_JAAS_CONFIG", "a b=c;");
        env.put("KAFKA_CONFLUENT__SUPPORT_METRICS_ENABLE", "false");
        env.put("KAFKA_SOME___DASHED__AND_DOTTED", "1");
        for (String jvm : List.of(
                "KAFKA_VERSION",
                "KAFKA_HEAP_OPTS",
                "KAFKA_LOG4J_OPTS",
                "KAFKA_JMX_OPTS",
                "KAFKA_JVM_PERFORMANCE_OPTS",
                "KAFKA_GC_LOG_OPTS",
                "KAFKA_LOG4J_ROOT_LOGLEVEL",
                "KAFKA_LOG4J_LOGGERS",
                "KAFKA_TOOLS_LOG4J_LOGLEVEL",
                "KAFKA_JMX_HOSTNAME")) {
            env.put(jvm, "-Dx=1");
        }
        env.put("CLUSTER_ID", "4L6g3nShT-eMCtK--X86sw");
        env.put("NOT_KAFKA_SETTING", "x");

        ProcessBuilder pb = new ProcessBuilder("bash", run.toString(), "--print-config").redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "entrypoint finished");
        assertEquals(0, p.exitValue(), out);

        assertEquals(
                new TreeSet<>(wrapperLines(env)),
                new TreeSet<>(out.lines().toList()),
                "server.properties lines of the local image's entrypoint vs Kafka's KafkaDockerWrapper");
    }

    /** @return the server.properties lines the image derives from the container's environment */
    private static Properties serverProperties(KafkaContainer container) throws Exception {
        Properties p = new Properties();
        p.load(new StringReader(String.join("\n", wrapperLines(container.getEnvMap()))));
        return p;
    }

    /** @return the lines Kafka's {@code KafkaDockerWrapper.getServerConfigsFromEnv} makes of {@code env} */
    static List<String> wrapperLines(Map<String, String> env) throws Exception {
        Class<?> converters = Class.forName("scala.jdk.javaapi.CollectionConverters");
        Object mutable = converters.getMethod("asScala", Map.class).invoke(null, env);
        Class<?> mapCompanion = Class.forName("scala.collection.immutable.Map$");
        Object immutable = mapCompanion
                .getMethod("from", Class.forName("scala.collection.IterableOnce"))
                .invoke(mapCompanion.getField("MODULE$").get(null), mutable);
        Class<?> wrapper = Class.forName("kafka.docker.KafkaDockerWrapper$");
        Method fromEnv = wrapper.getMethod("getServerConfigsFromEnv", Class.forName("scala.collection.immutable.Map"));
        Object lines = fromEnv.invoke(wrapper.getField("MODULE$").get(null), immutable);
        @SuppressWarnings("unchecked")
        List<String> javaLines = (List<String>) converters
                .getMethod("asJava", Class.forName("scala.collection.Seq"))
                .invoke(null, lines);
        return javaLines;
    }
}
