// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.inprocess;

import dev.kpipe.plugin.KpipePlugin;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Future;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;

/** What the in-process tests do with a {@link KafkaClusterTestKit}: topics led by one broker, producers, kpipe's gauges. */
final class InProcessCluster {

    private InProcessCluster() {}

    /**
     * Creates a topic of one partition on the given replicas, the first its leader, with {@code min.insync.replicas}
     * equal to their number.
     */
    static void createTopic(KafkaClusterTestKit cluster, String topic, List<Integer> replicas) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, replicas))
                            .configs(Map.of("min.insync.replicas", Integer.toString(replicas.size())))))
                    .all()
                    .get();
        }
    }

    /**
     * Sends {@code records} records of 1 KiB to a topic with an idempotent acks=all producer (5 in flight), and waits for
     * every ack.
     *
     * @return the offsets, in send order
     */
    static List<Long> produce(KafkaClusterTestKit cluster, String topic, int records) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096");
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, null, new byte[1024])));
            }
            producer.flush();
        }
        List<Long> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : sent) {
            offsets.add(f.get().offset());
        }
        return offsets;
    }

    /** @return the broker's kpipe, if it runs one */
    static Optional<KpipePlugin> kpipe(BrokerServer broker) {
        return KpipePlugin.of(broker.metrics());
    }

    /**
     * @return the value of one of the broker's kpipe metrics (group {@code kpipe-metrics}), by name
     * @throws AssertionError if the broker runs no kpipe or has no such metric
     */
    static double gauge(BrokerServer broker, String name) {
        Metrics registry = kpipe(broker)
                .flatMap(KpipePlugin::kpipeMetrics)
                .orElseThrow(() -> new AssertionError("node " + broker.config().nodeId() + " runs no kpipe"));
        for (Map.Entry<org.apache.kafka.common.MetricName, KafkaMetric> e :
                registry.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("kpipe-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("node " + broker.config().nodeId() + " has no kpipe metric " + name);
    }

    /** @return the consecutive offsets 0 .. n-1 */
    static List<Long> consecutive(int n) {
        List<Long> out = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }
}
