// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import dev.kpipe.it.KpipeLog;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * The single node of docs/operations.md's container recipe, run from the page ({@link ContainerRecipe}): the image
 * built with the page's Dockerfile (the suite's kpipe image, {@code ContainerRecipeTest} checks the text), every
 * {@code -e} variable of its {@code docker run} as written, but for the host port: the page publishes 9092 on 9092, here
 * a free port is published instead and advertised in place of 9092 (another broker of this machine may hold 9092). A
 * transactional producer commits records, which a {@code read_committed} consumer reads back; the node holds {@code
 * __transaction_state} and kpipe started as a Java agent.
 *
 * <p>Skipped with one line where no Docker engine is reachable or no image can be had ({@link DockerEngine}).
 */
@Tag("containers")
@ExtendWith(DockerEngine.class)
class ContainerRecipeIT {
    private static final int RECORDS = 500;

    @Test
    void aTransactionalProducerCommitsOnTheRecipesSingleNode() throws Exception {
        ContainerRecipe recipe = ContainerRecipe.fromDocs();
        int containerPort = Integer.parseInt(recipe.publish().split(":")[1]);
        int hostPort = freePort();
        Map<String, String> env = new HashMap<>(recipe.env());
        env.put(
                "KAFKA_ADVERTISED_LISTENERS",
                env.get("KAFKA_ADVERTISED_LISTENERS").replace("localhost:" + containerPort, "localhost:" + hostPort));
        Path logs = ContainerLogs.folderFor(ContainerRecipeIT.class);
        try (GenericContainer<?> node =
                ContainerLogs.keep(new GenericContainer<>(KpipeContainers.image(true)), logs, "recipe-node")) {
            node.withEnv(env)
                    .withExposedPorts(containerPort)
                    .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig()
                            .withPortBindings(
                                    new PortBinding(Ports.Binding.bindPort(hostPort), ExposedPort.tcp(containerPort))))
                    .waitingFor(Wait.forLogMessage(".*Transitioning from RECOVERY to RUNNING.*", 1)
                            .withStartupTimeout(KpipeContainers.START_TIMEOUT));
            node.start();

            String bootstrap = "localhost:" + hostPort;
            String topic = "recipe-txn";
            Map<String, Object> client = new HashMap<>();
            client.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(client)) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)))
                        .all()
                        .get(60, TimeUnit.SECONDS);
                produceInTransactions(client, topic);
                Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true))
                        .names()
                        .get(30, TimeUnit.SECONDS);
                assertTrue(topics.contains("__transaction_state"), "the node holds the transaction log: " + topics);
            }
            assertEquals(RECORDS, readCommitted(client, topic).size(), "every committed record read back");

            List<String> started = KpipeLog.startedLines(node.getLogs());
            assertEquals(1, started.size(), () -> "one kpipe start line: " + started);
            assertTrue(started.get(0).contains("install mode javaagent"), started.get(0));
        }
    }

    private static void produceInTransactions(Map<String, Object> client, String topic) {
        Map<String, Object> p = new HashMap<>(client);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "recipe-txn-producer");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 120_000);
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            for (int txn = 0; txn < 5; txn++) {
                producer.beginTransaction();
                for (int i = 0; i < RECORDS / 5; i++) {
                    producer.send(new ProducerRecord<>(topic, "r" + (txn * (RECORDS / 5) + i)));
                }
                producer.commitTransaction();
            }
        }
    }

    private static List<String> readCommitted(Map<String, Object> client, String topic) {
        Map<String, Object> c = new HashMap<>(client);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "recipe-reader");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (values.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(r.value());
                }
            }
        }
        for (int i = 0; i < values.size(); i++) {
            assertEquals("r" + i, values.get(i), "in order, once");
        }
        return values;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
