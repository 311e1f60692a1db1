// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.reliability.KpipeGauges;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RetriableCommitFailedException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The group coordinator moves while a consumer's offset commits are pipelined on its connection: three brokers, the
 * offsets topic (one partition) replicated to all three and acknowledged only after the followers' next fetch (up to
 * 100 ms), so several commits are in flight on the coordinator's connection when its broker is restarted (controlled
 * shutdown: the offsets partition's leadership, and with it the coordinator, moves to another broker). The consumer
 * commits asynchronously after every poll throughout, as the move happens and after it; the commits that were in flight
 * fail with the client's retriable commit error and are not retried (as {@code commitAsync} does on stock), later ones go
 * to the new coordinator. Checked: the offsets log never goes backwards (no commit of the old coordinator's pipeline is
 * applied after a later one), every commit acknowledged without error is in it, every commit that failed failed with a
 * retriable error, the last commit wins, kpipe pipelined commits on the first coordinator before the move and on the
 * second after it, and every broker's per-connection state is back to 0 once the consumer closed.
 *
 * <p>Node 1 is the harness's only controller, so the offsets partition is led from node 2 or 3 (its replicas are
 * reordered and the preferred leader elected when the controller chose node 1), and that broker is the one restarted.
 * The data topic lives on node 1 so consumption never waits for the move.
 */
@KafkaCluster(
        nodes = 3,
        brokerConfig = {
            "offsets.topic.replication.factor=3",
            "offsets.topic.num.partitions=1",
            "replica.fetch.min.bytes=10000000",
            "replica.fetch.wait.max.ms=100"
        })
class GroupCoordinatorMovedIT {
    private static final String TOPIC = "moved-commits";
    private static final String GROUP = "kpipe-moved-commits";
    private static final int RECORDS = 4_000;
    /** Consumed (and committed) before the move starts. */
    private static final int BEFORE_MOVE = 1_000;

    private static final Duration AWAIT = Duration.ofSeconds(90);

    @Test
    void committedOffsetsNeverGoBackwardsWhenTheCoordinatorMoves(Cluster cluster) throws Exception {
        Admin admin = cluster.admin();
        admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(1)))))
                .all()
                .get(30, TimeUnit.SECONDS);
        cluster.awaitTopicsReady(List.of(TOPIC), AWAIT);
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        Map<String, Object> pc = new HashMap<>(cluster.clientConfig());
        pc.put(ProducerConfig.ACKS_CONFIG, "1");
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(pc, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, Integer.toString(i).getBytes(StandardCharsets.US_ASCII)));
            }
            p.flush();
        }
        int first = offsetsLeaderOffTheController(cluster);
        KafkaNode firstCoordinator = cluster.node(first);
        double firstBefore = KpipeJmx.kpipe(firstCoordinator, "pipelined-offset-commit-total");

        Map<String, Object> cc = new HashMap<>(cluster.clientConfig());
        cc.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        cc.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        cc.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cc.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5);
        cc.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000);
        List<Long> sent = new ArrayList<>();
        List<Long> acknowledged = Collections.synchronizedList(new ArrayList<>());
        List<Exception> failed = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Throwable> moveError = new AtomicReference<>();
        double firstPipelinedBeforeMove = 0;
        int second = -1;
        long consumedUpTo = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(cc, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            Thread move = null;
            long deadline = System.nanoTime() + AWAIT.toNanos();
            while (consumedUpTo < RECORDS || move == null || move.isAlive()) {
                assertTrue(
                        System.nanoTime() < deadline,
                        "consumed up to " + consumedUpTo + " within " + AWAIT.toSeconds() + " s");
                if (moveError.get() != null) {
                    fail("restarting the coordinator failed", moveError.get());
                }
                if (move == null && consumedUpTo >= BEFORE_MOVE && acknowledged.size() >= 10) {
                    firstPipelinedBeforeMove =
                            KpipeJmx.kpipe(firstCoordinator, "pipelined-offset-commit-total") - firstBefore;
                    move = new Thread(
                            () -> {
                                try {
                                    firstCoordinator.restart();
                                } catch (Throwable t) {
                                    moveError.set(t);
                                }
                            },
                            "restart-coordinator");
                    move.start();
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                    assertEquals(
                            Long.toString(r.offset()),
                            new String(r.value(), StandardCharsets.US_ASCII),
                            "records in order");
                    consumedUpTo = r.offset() + 1;
                }
                if (consumedUpTo > 0 && (sent.isEmpty() || sent.get(sent.size() - 1) < consumedUpTo)) {
                    long offset = consumedUpTo;
                    sent.add(offset);
                    consumer.commitAsync(Map.of(tp, new OffsetAndMetadata(offset)), (offsets, e) -> {
                        if (e != null) {
                            failed.add(e);
                        } else {
                            acknowledged.add(offsets.get(tp).offset());
                        }
                    });
                }
                if (move != null && move.isAlive()) {
                    TimeUnit.MILLISECONDS.sleep(50); // paced while the coordinator moves: commits keep coming
                }
            }
            // The last commit may have been one that failed: commitSync retries until a coordinator takes it.
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(RECORDS)), AWAIT);
            second = coordinator(admin);
        }
        assertNotEquals(first, second, "the coordinator moved");

        List<Long> logged = OffsetsLog.committedOffsets(cluster, GROUP, tp);
        for (int i = 1; i < logged.size(); i++) {
            if (logged.get(i) < logged.get(i - 1)) {
                fail("the committed offset went backwards at entry " + i + " of the offsets log: " + logged);
            }
        }
        assertTrue(Set.copyOf(logged).containsAll(acknowledged), "every acknowledged commit is in the offsets log");
        assertEquals(RECORDS, logged.get(logged.size() - 1), "the last commit won");
        Map<String, Integer> errors = new TreeMap<>();
        for (Exception e : failed) {
            assertTrue(e instanceof RetriableCommitFailedException, "a commit failed with " + e);
            String cause = Optional.ofNullable(e.getCause())
                    .map(c -> c.getClass().getSimpleName())
                    .orElse("-");
            errors.merge(cause, 1, Integer::sum);
        }
        double secondPipelined = KpipeJmx.kpipe(cluster.node(second), "pipelined-offset-commit-total");
        System.out.printf(
                "GroupCoordinatorMovedIT: %d commits sent, %d acknowledged, %d failed %s; coordinator %d -> %d;"
                        + " pipelined %.0f on %d before the move, %.0f on %d since its start; %d entries in the"
                        + " offsets log, never backwards%n",
                sent.size(),
                acknowledged.size(),
                failed.size(),
                errors,
                first,
                second,
                firstPipelinedBeforeMove,
                first,
                secondPipelined,
                second,
                logged.size());
        assertTrue(firstPipelinedBeforeMove > 0, "commits pipelined on the first coordinator before the move");
        assertTrue(secondPipelined > 0, "commits pipelined on the new coordinator after the move");
        for (KafkaNode n : cluster.nodes()) {
            KpipeGauges.awaitAllZero(n, Duration.ofSeconds(30));
            assertEquals(0.0, KpipeJmx.kpipe(n, "plugin-fault-total"), "no throwable caught in kpipe code");
        }
    }

    /**
     * Creates the offsets topic (a coordinator lookup does) and makes sure its leader is not node 1, the only
     * controller, which the test could not restart without stopping the cluster.
     *
     * @return the broker leading the offsets partition: the group's coordinator
     */
    private static int offsetsLeaderOffTheController(Cluster cluster) throws Exception {
        Admin admin = cluster.admin();
        TopicPartition offsets = new TopicPartition(Topic.GROUP_METADATA_TOPIC_NAME, 0);
        await("the offsets topic created, replicated to all three brokers", () -> {
            try {
                admin.listConsumerGroupOffsets(GROUP).all().get(10, TimeUnit.SECONDS);
                TopicDescription d = admin.describeTopics(List.of(offsets.topic()))
                        .allTopicNames()
                        .get(10, TimeUnit.SECONDS)
                        .get(offsets.topic());
                return d.partitions().get(0).leader() != null
                        && d.partitions().get(0).isr().size() == 3;
            } catch (Exception e) {
                return false; // not created yet: the lookup creates it
            }
        });
        if (offsetsLeader(admin) == 1) {
            admin.alterPartitionReassignments(
                            Map.of(offsets, Optional.of(new NewPartitionReassignment(List.of(2, 3, 1)))))
                    .all()
                    .get(30, TimeUnit.SECONDS);
            await("the reassignment of the offsets partition done", () -> {
                try {
                    return admin.listPartitionReassignments()
                            .reassignments()
                            .get(10, TimeUnit.SECONDS)
                            .isEmpty();
                } catch (Exception e) {
                    return false;
                }
            });
            admin.electLeaders(ElectionType.PREFERRED, Set.of(offsets)).all().get(30, TimeUnit.SECONDS);
            await("node 2 leading the offsets partition", () -> {
                try {
                    return offsetsLeader(admin) == 2;
                } catch (Exception e) {
                    return false;
                }
            });
        }
        return offsetsLeader(admin);
    }

    private static int offsetsLeader(Admin admin) throws Exception {
        return admin.describeTopics(List.of(Topic.GROUP_METADATA_TOPIC_NAME))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(Topic.GROUP_METADATA_TOPIC_NAME)
                .partitions()
                .get(0)
                .leader()
                .id();
    }

    private static int coordinator(Admin admin) throws Exception {
        return admin.describeConsumerGroups(List.of(GROUP))
                .all()
                .get(10, TimeUnit.SECONDS)
                .get(GROUP)
                .coordinator()
                .id();
    }

    /** Polls every 100 ms until the condition holds, else fails naming it. */
    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + AWAIT.toSeconds() + " s: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }
}
