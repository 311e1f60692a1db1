// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Topic creation for a {@link Cluster} through its admin client, and waiting until every partition of a topic is
 * served by its leader. Blocks the calling thread for at most the given timeout (checked every 50 ms); thread-safe
 * as the admin client is.
 */
final class Topics {
    private Topics() {}

    /**
     * Creates topics and waits until every partition is served by its leader (see {@link #awaitReady}).
     *
     * @param admin the cluster's admin client, asked for on each use (it fails once the cluster is closed)
     * @param topics the topics
     * @param timeout how long creation plus readiness may take
     * @throws IllegalStateException on failure or timeout
     */
    static void create(Supplier<Admin> admin, Collection<NewTopic> topics, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            admin.get().createTopics(topics).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("creating topics " + topics + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        awaitReady(
                admin,
                topics.stream().map(NewTopic::name).collect(Collectors.toList()),
                Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    /**
     * Waits until each partition of the topics is served by its leader: a {@code ListOffsets} to every leader succeeds
     * (retried while brokers answer {@code NOT_LEADER_OR_FOLLOWER} or {@code UNKNOWN_TOPIC_OR_PARTITION}). {@code
     * CreateTopics} returns when the controller committed the topic, before the leaders' replica managers have applied
     * it; an idempotent producer that starts sending in that window can get {@code NOT_LEADER_OR_FOLLOWER} on its first
     * batch and have a later in-flight batch accepted, after which the retried first batch fails forever with {@code
     * OUT_OF_ORDER_SEQUENCE_NUMBER}.
     *
     * @param admin the cluster's admin client, asked for on each use
     * @param topics topic names
     * @param timeout how long to wait
     * @throws IllegalStateException on failure or timeout
     */
    static void awaitReady(Supplier<Admin> admin, Collection<String> topics, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        try {
            while (true) {
                long ms = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                try {
                    Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
                    admin.get()
                            .describeTopics(topics)
                            .allTopicNames()
                            .get(ms, TimeUnit.MILLISECONDS)
                            .forEach((name, d) -> d.partitions()
                                    .forEach(p ->
                                            latest.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
                    admin.get()
                            .listOffsets(
                                    latest, new ListOffsetsOptions().timeoutMs((int) Math.min(Integer.MAX_VALUE, ms)))
                            .all()
                            .get(ms, TimeUnit.MILLISECONDS);
                    return;
                } catch (ExecutionException e) {
                    // A broker that has not applied the new topic yet answers UNKNOWN_TOPIC_OR_PARTITION: ask again.
                    if (!(e.getCause() instanceof RetriableException)) {
                        throw new IllegalStateException("topics " + topics + " not ready", e);
                    }
                    last = e;
                } catch (TimeoutException e) {
                    last = e;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "topics " + topics + " not ready within " + timeout.toMillis() + " ms", last);
                }
                TimeUnit.MILLISECONDS.sleep(50); // back-off between probes
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
