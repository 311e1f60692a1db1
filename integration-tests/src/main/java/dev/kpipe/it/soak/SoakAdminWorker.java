// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.soak;

import static dev.kpipe.it.soak.SoakWorkers.GROUP;
import static dev.kpipe.it.soak.SoakWorkers.PARTITIONS;
import static dev.kpipe.it.soak.SoakWorkers.TOPIC;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * An admin client cycling through topic and group administration: create a scratch topic, wait until its leaders
 * serve it, describe it, list offsets of the main topic (earliest and latest), describe the cluster, list topics,
 * describe the consumer group and its offsets, delete the scratch topic; then a short pause.
 */
final class SoakAdminWorker extends SoakWorker {
    private static final long CALL_TIMEOUT_S = 30;

    private Admin admin;

    SoakAdminWorker(SoakStats stats, Map<String, Object> baseConfig) {
        super("admin", stats, baseConfig);
    }

    @Override
    void open() {
        Map<String, Object> p = new HashMap<>(baseConfig);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "soak-admin");
        admin = Admin.create(p);
    }

    @Override
    void step() throws InterruptedException {
        String scratch = "soak-scratch-" + stats.scratchTopics.getAndIncrement();
        boolean created = false;
        try {
            call(admin.createTopics(List.of(new NewTopic(scratch, 3, (short) 2)))
                    .all());
            created = true;
            stats.topicsCreated.incrementAndGet();
            awaitServed(scratch);
            call(admin.describeTopics(List.of(scratch, TOPIC)).allTopicNames());
            Map<TopicPartition, OffsetSpec> earliest = new LinkedHashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                earliest.put(new TopicPartition(TOPIC, p), OffsetSpec.earliest());
                latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
            }
            call(admin.listOffsets(earliest).all());
            call(admin.listOffsets(latest).all());
            call(admin.describeCluster().nodes());
            call(admin.listTopics().names());
            try {
                call(admin.describeConsumerGroups(List.of(GROUP)).all());
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                    throw e;
                }
                stats.adminRetries.incrementAndGet(); // the consumers have not joined yet (start of a phase)
            }
            call(admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata());
            call(admin.deleteTopics(List.of(scratch)).all());
            created = false;
            stats.topicsDeleted.incrementAndGet();
        } catch (ExecutionException | TimeoutException e) {
            stats.error(
                    name,
                    "admin call failed (scratch topic " + scratch + ")",
                    e instanceof ExecutionException ? e.getCause() : e);
        } finally {
            if (created) { // an admin call failed after the topic was created: do not leave it behind
                try {
                    admin.deleteTopics(List.of(scratch)).all().get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
                    stats.topicsDeleted.incrementAndGet();
                } catch (ExecutionException | TimeoutException e) {
                    stats.error(name, "deleting scratch topic " + scratch + " failed", e);
                }
            }
        }
        pause(500);
    }

    /**
     * Waits until every partition of a new topic is served by its leader: {@code CreateTopics} returns when the
     * controller committed the topic, before the brokers applied it, so they may answer a retriable error for a
     * moment (see {@code Cluster.awaitTopicsReady}).
     */
    private void awaitServed(String topic) throws ExecutionException, TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CALL_TIMEOUT_S);
        while (true) {
            try {
                Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
                call(admin.describeTopics(List.of(topic)).allTopicNames())
                        .get(topic)
                        .partitions()
                        .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
                call(admin.listOffsets(latest, new ListOffsetsOptions().timeoutMs(5000))
                        .all());
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
                    throw e;
                }
                stats.adminRetries.incrementAndGet();
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    private <T> T call(org.apache.kafka.common.KafkaFuture<T> f)
            throws ExecutionException, TimeoutException, InterruptedException {
        T t = f.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
        stats.adminCalls.incrementAndGet();
        return t;
    }

    @Override
    void close() {
        admin.close(Duration.ofSeconds(30));
    }

    @Override
    void restarted() {
        stats.adminRestarts.incrementAndGet();
    }
}
