package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.io.StringReader;
import org.junit.jupiter.api.Test;
import org.testcontainers.kafka.KafkaContainer;

/**
 * Without Docker: the environment {@link KpipeContainerIT} gives the image becomes the intended {@code
 * server.properties}, checked with the very code the image runs at start ({@code
 * kafka.docker.KafkaDockerWrapper.getServerConfigsFromEnv} of the build's Kafka, on the test class path).
 */
class KpipeContainerEnvTest {

  @Test
  void environmentMapsToTheKpipeInstallLinesAndKraftSingleNode() throws Exception {
    Properties attach = serverProperties(KpipeContainers.broker(false));
    assertEquals("dev.kpipe.plugin.KpipePlugin", attach.getProperty("metric.reporters"));
    assertEquals("true", attach.getProperty("kpipe.enable"));
    assertEquals("16", attach.getProperty("kpipe.max.inflight.requests.per.connection"));
    assertEquals("1", attach.getProperty("node.id"), "Testcontainers' single-node KRaft settings");
    assertEquals("broker,controller", attach.getProperty("process.roles"));
    assertTrue(attach.getProperty("listeners", "").contains("CONTROLLER://"), attach.getProperty("listeners"));
    assertEquals("CONTROLLER", attach.getProperty("controller.listener.names"));

    Properties agent = serverProperties(KpipeContainers.broker(true));
    assertEquals("true", agent.getProperty("kpipe.enable"));
    assertEquals(null, agent.getProperty("opts"), "KAFKA_OPTS is a JVM option, not a broker setting");
    assertTrue(KpipeContainers.kpipeEnv(true).get("KAFKA_OPTS").startsWith("-javaagent:/opt/kafka/libs/kpipe-plugin-"));
  }

  /** @return the server.properties lines the image derives from the container's environment */
  private static Properties serverProperties(KafkaContainer container) throws Exception {
    Map<String, String> env = container.getEnvMap();
    Class<?> converters = Class.forName("scala.jdk.javaapi.CollectionConverters");
    Object mutable = converters.getMethod("asScala", Map.class).invoke(null, env);
    Class<?> mapCompanion = Class.forName("scala.collection.immutable.Map$");
    Object immutable = mapCompanion.getMethod("from", Class.forName("scala.collection.IterableOnce"))
        .invoke(mapCompanion.getField("MODULE$").get(null), mutable);
    Class<?> wrapper = Class.forName("kafka.docker.KafkaDockerWrapper$");
    Method fromEnv = wrapper.getMethod("getServerConfigsFromEnv", Class.forName("scala.collection.immutable.Map"));
    Object lines = fromEnv.invoke(wrapper.getField("MODULE$").get(null), immutable);
    @SuppressWarnings("unchecked")
    List<String> javaLines = (List<String>) converters.getMethod("asJava", Class.forName("scala.collection.Seq"))
        .invoke(null, lines);
    Properties p = new Properties();
    p.load(new StringReader(String.join("\n", javaLines)));
    return p;
  }
}
