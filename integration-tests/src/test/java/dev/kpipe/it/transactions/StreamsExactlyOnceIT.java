// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.transactions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kpipe.it.RecordReadBack;
import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaCluster;
import dev.kpipe.it.harness.KafkaNode;
import dev.kpipe.it.pipelining.KpipeJmx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kafka Streams application with {@code processing.guarantee=exactly_once_v2} through a kpipe broker on the
 * slow-ack cluster: it reads an input topic (3,000 records, 30 keys), writes each value upper-cased to one output
 * topic and the running count per key (a state store with a changelog, cache off, so one update per record) to
 * another. Once the group's committed offsets reach the end of the input, the application is closed and both outputs
 * are read with {@code read_committed}: per key the upper-cased values are exactly the input's, in input order, once
 * each, and the counts are exactly 1, 2, ..., n.
 */
@KafkaCluster(
        nodes = 2,
        brokerConfig = {"num.io.threads=8"},
        nodeConfig = {"2:replica.fetch.min.bytes=10000000", "2:replica.fetch.wait.max.ms=50"})
class StreamsExactlyOnceIT {
    private static final String INPUT = "streams-in";
    private static final String UPPER = "streams-upper";
    private static final String COUNTS = "streams-counts";
    private static final String APP_ID = "kpipe-eos-app";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 3000;
    private static final int KEYS = 30;
    private static final Duration AWAIT = Duration.ofSeconds(60);

    @Test
    void outputIsTheTransformedInputExactlyOnce(Cluster cluster, @TempDir Path stateDir) throws Exception {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(p, List.of(1, 2));
        }
        List<NewTopic> topics = new ArrayList<>();
        for (String t : List.of(INPUT, UPPER, COUNTS)) {
            topics.add(new NewTopic(t, assignment).configs(Map.of("min.insync.replicas", "2")));
        }
        cluster.createTopics(topics, AWAIT);

        // The input, and what each key's output must be.
        Map<String, List<String>> expectedUpper = new TreeMap<>();
        Random random = new Random(1515);
        Map<String, Object> pc = Transactions.producerConfig(cluster, "streams-input", null);
        try (KafkaProducer<String, String> p =
                new KafkaProducer<>(pc, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                String key = "k" + (i % KEYS);
                StringBuilder word = new StringBuilder("record-" + i + "-");
                for (int c = 0; c < 8; c++) {
                    word.append((char) ('a' + random.nextInt(26)));
                }
                p.send(new ProducerRecord<>(INPUT, (i % KEYS) % PARTITIONS, key, word.toString()));
                expectedUpper
                        .computeIfAbsent(key, k -> new ArrayList<>())
                        .add(word.toString().toUpperCase(Locale.ROOT));
            }
            p.flush();
        }

        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> in = builder.stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()));
        in.mapValues(v -> v.toUpperCase(Locale.ROOT)).to(UPPER, Produced.with(Serdes.String(), Serdes.String()));
        in.groupByKey()
                .count(Materialized.as("counts"))
                .toStream()
                .to(COUNTS, Produced.with(Serdes.String(), Serdes.Long()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP_ID);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 2);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.producerPrefix("batch.size"), 1024);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 200);
        AtomicReference<Throwable> streamsError = new AtomicReference<>();
        long t0 = System.nanoTime();
        try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.setUncaughtExceptionHandler(e -> {
                streamsError.compareAndSet(null, e);
                return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                        .SHUTDOWN_CLIENT;
            });
            streams.start();
            awaitCommittedInput(cluster, streamsError);
            streams.close(Duration.ofSeconds(30));
        }
        double processSeconds = (System.nanoTime() - t0) / 1e9;
        assertNull(streamsError.get(), "the Streams application had no uncaught exception");

        Transactions.awaitSettled(cluster, UPPER, PARTITIONS, AWAIT);
        Transactions.awaitSettled(cluster, COUNTS, PARTITIONS, AWAIT);
        Map<String, Object> cc = new HashMap<>(cluster.clientConfig());
        cc.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, List<String>> upper = new TreeMap<>();
        RecordReadBack.readToEnd(
                cc,
                UPPER,
                new StringDeserializer(),
                new StringDeserializer(),
                AWAIT,
                r -> upper.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value()));
        Map<String, List<Long>> counts = new TreeMap<>();
        RecordReadBack.readToEnd(
                cc,
                COUNTS,
                new StringDeserializer(),
                new LongDeserializer(),
                AWAIT,
                r -> counts.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value()));

        double deferred = KpipeJmx.kpipe(cluster.node(1), Transactions.DEFERRED_DISPATCH_TOTAL);
        System.out.printf(
                "StreamsExactlyOnceIT: %d input records over %d keys processed and committed in %.1f s;"
                        + " node 1 pipelined-request-total %.0f, inflight-requests-per-connection-max %.0f, %s %.0f%n",
                RECORDS,
                KEYS,
                processSeconds,
                KpipeJmx.kpipe(cluster.node(1), "pipelined-request-total"),
                KpipeJmx.kpipe(cluster.node(1), "inflight-requests-per-connection-max"),
                Transactions.DEFERRED_DISPATCH_TOTAL,
                deferred);
        assertTrue(
                deferred > 0,
                "the application's transactional produce requests were pipelined, their dispatch"
                        + " waiting for the append after verification");
        double txnOffsetCommits = 0;
        for (KafkaNode n : cluster.nodes()) {
            txnOffsetCommits += KpipeJmx.kpipe(n, "pipelined-txn-offset-commit-total");
        }
        System.out.printf(
                "StreamsExactlyOnceIT: pipelined-txn-offset-commit-total %.0f over the brokers%n", txnOffsetCommits);
        assertTrue(
                txnOffsetCommits > 0,
                "the application's TXN_OFFSET_COMMITs were pipelined behind its produce requests, not drained");
        assertEquals(expectedUpper.keySet(), upper.keySet(), "every key in the upper-cased output");
        for (Map.Entry<String, List<String>> e : expectedUpper.entrySet()) {
            assertEquals(
                    e.getValue(),
                    upper.get(e.getKey()),
                    "key " + e.getKey() + ": the upper-cased values, each once, in input order");
            List<Long> expectedCounts = new ArrayList<>();
            for (long c = 1; c <= e.getValue().size(); c++) {
                expectedCounts.add(c);
            }
            assertEquals(expectedCounts, counts.get(e.getKey()), "key " + e.getKey() + ": counts 1..n, each once");
        }
        for (int n = 1; n <= cluster.nodes().size(); n++) {
            assertEquals(
                    0.0, KpipeJmx.kpipe(cluster.node(n), "plugin-fault-total"), "no throwable caught in kpipe code");
        }
    }

    /** Waits until the application's committed offsets reach the end of every input partition. */
    private static void awaitCommittedInput(Cluster cluster, AtomicReference<Throwable> streamsError) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            latest.put(new TopicPartition(INPUT, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> end = new HashMap<>();
        cluster.admin().listOffsets(latest).all().get(10, TimeUnit.SECONDS).forEach((tp, r) -> end.put(tp, r.offset()));
        long deadline = System.nanoTime() + AWAIT.toNanos();
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of();
        while (true) {
            if (streamsError.get() != null) {
                fail("the Streams application failed", streamsError.get());
            }
            committed = cluster.admin()
                    .listConsumerGroupOffsets(APP_ID)
                    .partitionsToOffsetAndMetadata()
                    .get(10, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> c = committed;
            if (end.entrySet().stream()
                    .allMatch(
                            e -> c.get(e.getKey()) != null && c.get(e.getKey()).offset() >= e.getValue())) {
                return;
            }
            if (System.nanoTime() > deadline) {
                fail("the application committed " + committed + " of the input's end offsets " + end + " within "
                        + AWAIT.toSeconds() + " s; node 1's connection dump:\n"
                        + Transactions.connectionDump(cluster.node(1)));
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }
}
