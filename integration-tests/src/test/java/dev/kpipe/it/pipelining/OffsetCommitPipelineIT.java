// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.pipelining;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Offset commits pipelined on the group coordinator's connection: a consumer that commits asynchronously after every
 * poll, on a cluster whose offsets topic is replicated to a follower that acknowledges every 100 ms (both nodes fetch
 * with {@code replica.fetch.wait.max.ms=100}), so each commit waits about that long for its acks
 * ({@code offsets.commit.required.acks=-1}). Stock Kafka handles the queued commits one at a time; kpipe dispatches
 * each as soon as the coordinator appended it (classic coordinator) or enqueued its write (KIP-848's runtime). Checked:
 * every commit acknowledged without error, none lost; the offsets log holds the group's commits in the order they were
 * sent (a later commit is never overtaken by an earlier one) and the group's committed offset is the last one sent;
 * more than one commit was in flight on the coordinator's connection; heartbeats were pipelined behind the commits
 * and the member was never dropped from the group while it committed.
 *
 * <p>Not checked: the order of the client's commit callbacks. The classic Java consumer fires request completions
 * outside its network client's lock, from the application thread and from its heartbeat thread
 * ({@code ConsumerNetworkClient.firePendingCompletedRequests}), so when two commit responses arrive in one poll, which
 * pipelining makes common, their callbacks can run in either order although the responses arrived in order. The test
 * prints how often that happened.
 */
@Tag("core") // also run against every supported Kafka line (failsafe executions core-kafka-*)
@KafkaCluster(
        nodes = 2,
        brokerConfig = {
            "offsets.topic.replication.factor=2",
            "offsets.topic.num.partitions=1",
            "replica.fetch.min.bytes=10000000",
            "replica.fetch.wait.max.ms=100"
        })
class OffsetCommitPipelineIT {

    private static final int RECORDS = 2_000;
    private static final Duration AWAIT = Duration.ofSeconds(60);

    /** A classic-protocol consumer: JoinGroup/SyncGroup, HEARTBEAT and OFFSET_COMMIT on the coordinator connection. */
    @Test
    void asyncCommitsOfAClassicConsumerArePipelinedInOrder(Cluster cluster) throws Exception {
        run(cluster, "commits-classic", "classic", "heartbeat");
    }

    /** A KIP-848 consumer ({@code group.protocol=consumer}): CONSUMER_GROUP_HEARTBEAT and OFFSET_COMMIT. */
    @Test
    void asyncCommitsOfAConsumerProtocolMemberArePipelinedInOrder(Cluster cluster) throws Exception {
        assumeTrue(
                !cluster.kafkaVersion().startsWith("3."),
                "the consumer group protocol (KIP-848) is generally available from Kafka 4.0; this broker is "
                        + cluster.kafkaVersion());
        run(cluster, "commits-consumer", "consumer", "consumer-group-heartbeat");
    }

    private static void run(Cluster cluster, String topic, String protocol, String heartbeatApi) throws Exception {
        cluster.createTopic(topic, 1, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        Map<String, Object> pc = new HashMap<>(cluster.clientConfig());
        pc.put(ProducerConfig.ACKS_CONFIG, "1");
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(pc, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, Integer.toString(i).getBytes(StandardCharsets.US_ASCII)));
            }
            p.flush();
        }

        Map<Integer, double[]> before = new HashMap<>();
        for (KafkaNode n : cluster.nodes()) {
            before.put(n.id(), new double[] {
                KpipeJmx.kpipe(n, "pipelined-offset-commit-total"),
                KpipeJmx.kpipe(n, "pipelined-" + heartbeatApi + "-total")
            });
        }
        String group = "kpipe-" + topic;
        Map<String, Object> cc = new HashMap<>(cluster.clientConfig());
        cc.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cc.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        cc.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        cc.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cc.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20);
        if (protocol.equals("classic")) {
            cc.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
            cc.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 300);
        }
        List<Long> sent = new ArrayList<>();
        List<Long> acknowledged = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Exception> commitError = new AtomicReference<>();
        AtomicInteger revoked = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean closing = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicInteger assigned = new AtomicInteger();
        long consumedUpTo = 0;
        long t0 = System.nanoTime();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(cc, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty() && !closing.get()) {
                        revoked.incrementAndGet();
                    }
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty()) {
                        assigned.incrementAndGet();
                    }
                }
            });
            long deadline = System.nanoTime() + AWAIT.toNanos();
            while (consumedUpTo < RECORDS || acknowledged.size() < sent.size()) {
                assertTrue(
                        System.nanoTime() < deadline,
                        "consumed up to " + consumedUpTo + ", " + acknowledged.size() + " of " + sent.size()
                                + " commits acknowledged within " + AWAIT.toSeconds() + " s");
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                    assertEquals(
                            Long.toString(r.offset()),
                            new String(r.value(), StandardCharsets.US_ASCII),
                            "records in order");
                    consumedUpTo = r.offset() + 1;
                }
                if (consumedUpTo == RECORDS
                        && acknowledged.size() == sent.size()
                        && !sent.isEmpty()
                        && sent.get(sent.size() - 1) == RECORDS) {
                    closing.set(true); // leaving the group revokes the partition: not a rebalance
                }
                if (consumedUpTo > 0 && (sent.isEmpty() || sent.get(sent.size() - 1) < consumedUpTo)) {
                    long offset = consumedUpTo;
                    sent.add(offset);
                    consumer.commitAsync(Map.of(tp, new OffsetAndMetadata(offset)), (offsets, e) -> {
                        if (e != null) {
                            commitError.compareAndSet(null, e);
                        } else {
                            acknowledged.add(offsets.get(tp).offset());
                        }
                    });
                }
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertEquals(null, commitError.get(), "no commit failed");
        assertEquals(
                new java.util.TreeSet<>(sent),
                new java.util.TreeSet<>(acknowledged),
                "every commit acknowledged, none lost");
        int callbacksOutOfOrder = 0;
        for (int i = 1; i < acknowledged.size(); i++) {
            callbacksOutOfOrder += acknowledged.get(i) < acknowledged.get(i - 1) ? 1 : 0;
        }
        List<Long> logged = OffsetsLog.committedOffsets(cluster, group, tp);
        assertEquals(sent, logged, "the offsets log holds every commit once, in the order sent: none overtaken");
        long committed = cluster.admin()
                .listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(10, TimeUnit.SECONDS)
                .get(tp)
                .offset();
        assertEquals(sent.get(sent.size() - 1), committed, "the last commit sent won");
        assertEquals(RECORDS, committed);
        assertEquals(1, assigned.get(), "assigned once: the member stayed in the group through the slow commits");
        assertEquals(0, revoked.get(), "never revoked while committing");

        KafkaNode coordinator = cluster.node(cluster.admin()
                .describeConsumerGroups(List.of(group))
                .all()
                .get(10, TimeUnit.SECONDS)
                .get(group)
                .coordinator()
                .id());
        double maxInflight = KpipeJmx.kpipe(coordinator, "inflight-offset-commit-per-connection-max");
        double pipelined =
                KpipeJmx.kpipe(coordinator, "pipelined-offset-commit-total") - before.get(coordinator.id())[0];
        double heartbeats =
                KpipeJmx.kpipe(coordinator, "pipelined-" + heartbeatApi + "-total") - before.get(coordinator.id())[1];
        System.out.printf(
                "OffsetCommitPipelineIT (Kafka %s, %s protocol): %d commits in %.1f s, %.0f pipelined, at most %.0f in"
                        + " flight on one connection, %.0f %s pipelined, %d commit callbacks out of order%n",
                cluster.kafkaVersion(),
                protocol,
                sent.size(),
                seconds,
                pipelined,
                maxInflight,
                heartbeats,
                heartbeatApi,
                callbacksOutOfOrder);
        assertTrue(maxInflight >= 2, "more than one commit in flight on the coordinator's connection: " + maxInflight);
        assertTrue(pipelined >= sent.size(), "every commit pipelined: " + pipelined + " of " + sent.size());
        assertTrue(heartbeats > 0, "heartbeats pipelined behind the commits: " + heartbeats);
        assertEquals(0.0, KpipeJmx.kpipe(coordinator, "plugin-fault-total"), "no throwable caught in kpipe code");
    }
}
