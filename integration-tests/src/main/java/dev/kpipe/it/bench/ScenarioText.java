// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A {@link Scenario} in words: its JSON description and its table headline. Stateless. */
final class ScenarioText {
    private ScenarioText() {}

    /** @return a description of the scenario for the table header and the JSON */
    static Map<String, Object> describe(Scenario s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id);
        m.put("label", s.label);
        m.put("nodes", s.nodes);
        if (s.windowMs > 0) {
            m.put("follower_replica_fetch_wait_max_ms", s.windowMs);
            m.put("follower_replica_fetch_min_bytes", Scenario.FOLLOWER_FETCH_MIN_BYTES);
            if (s.hasCeiling()) {
                m.put("ceiling_requests_per_s", s.ceilingRequestsPerSec());
            }
        }
        m.put("topic", s.topic);
        m.put("partitions", s.partitions);
        m.put("replica_assignment", s.assignment.toString());
        m.put("topic_config", s.topicConfig);
        m.put("producers", s.producers);
        if (s.client != null) {
            m.put("client", s.client.id);
            m.put("client_settings", s.client.describe());
        }
        m.put("record_value_bytes", s.recordBytes);
        m.put("fixed_partition", s.fixedPartition);
        if (s.partitionPerProducer) {
            m.put("partition_per_producer", true);
        }
        m.put("acks", s.acks);
        m.put("enable_idempotence", s.idempotence);
        m.put("max_in_flight_requests_per_connection", s.maxInFlight);
        m.put("batch_size", s.batchBytes);
        m.put("linger_ms", s.lingerMs);
        if (s.kpipeLingerMs >= 0) {
            m.put("kpipe_linger_ms", s.kpipeLingerMs);
        }
        m.put("buffer_memory", s.bufferBytes);
        if (!s.kpipeConfig.isEmpty()) {
            m.put("kpipe_side_config", s.kpipeConfig);
        }
        if (!s.nodeConfig.isEmpty()) {
            m.put("node_config", s.nodeConfig.toString());
        }
        if (s.isFixedLoad()) {
            m.put("offered_records_per_s", s.offeredRecordsPerSec);
        }
        m.put("aa_control", s.aaControl);
        if (s.commitEvery > 0) {
            m.put("transactional", true);
            m.put("records_per_transaction", s.commitEvery);
        }
        if (s.isS9()) {
            m.put("slow_readers", s.slowReaders);
            m.put("slow_reader_topic", s.sideTopic);
            m.put("slow_readers_active", s.slowReadersActive);
            m.put(
                    "slow_reader_stall_reconnect_ms",
                    s.slowReadersActive ? SlowReaders.STALL_RECONNECT_NANOS / 1_000_000 : 0);
            m.put("slow_reader_request_bytes", SlowReaders.requestBytes(s.sideTopic));
            m.put("slow_reader_receive_buffer_bytes", SlowReaders.RECEIVE_BUFFER_BYTES);
        }
        if (s.isS11()) {
            m.put("excluded_producers", s.excludedProducers);
            m.put("excluded_topic", s.sideTopic);
            m.put("excluded_offered_records_per_s", s.excludedRecordsPerSec);
        }
        if (s.isS10()) {
            m.put("connections", s.connections);
            m.put("producing_connections", S10Round.producing(s.connections));
            m.put("produce_requests_per_s_per_producing_connection", 1);
        }
        return m;
    }

    /** @return one line for the table header */
    static String headline(Scenario s) {
        if (s.isS10()) {
            return s.label + ": " + s.nodes + " node(s), " + s.connections
                    + " raw connections, each upgraded by one produce"
                    + " request (acks=1, one " + s.recordBytes + " B record); " + S10Round.producing(s.connections)
                    + " of them then produce 1 request/s, the rest idle";
        }
        return s.label + ": " + s.nodes + " node(s)"
                + (s.windowMs > 0 ? ", follower replica.fetch.wait.max.ms=" + s.windowMs : "")
                + ", acks=" + s.acks + ", " + s.producers + " producer(s)"
                + (s.partitionPerProducer ? " (one partition and one connection each)" : "") + ", " + s.recordBytes
                + " B records, batch.size="
                + s.batchBytes + ", linger.ms=" + s.lingerMs
                + (s.kpipeLingerMs >= 0 ? " (kpipe side " + s.kpipeLingerMs + ")" : "") + ", max.in.flight="
                + s.maxInFlight
                + ", buffer.memory="
                + s.bufferBytes / 1024 + " KiB"
                + (s.client != null ? ", client " + s.client.describe() : "")
                + (s.isFixedLoad() ? ", offered " + s.offeredRecordsPerSec + " records/s" : "")
                + (s.commitEvery > 0 ? ", transactional, commit every " + s.commitEvery + " records" : "")
                + (s.isS11()
                        ? ", beside " + s.excludedProducers + " producers (one partition and connection each) on "
                                + s.sideTopic + ", excluded by kpipe.topics.exclude on the kpipe side, offering "
                                + s.excludedRecordsPerSec + " records/s"
                        : "")
                + (s.isS9()
                        ? ", beside " + s.slowReaders + " slow readers (raw connections writing "
                                + SlowReaders.requestBytes(s.sideTopic) + " B acks=all produce requests to "
                                + s.sideTopic
                                + ", never reading"
                                + (s.slowReadersActive
                                        ? "; replaced by a new connection when the broker stops reading one"
                                        : "")
                                + ")"
                        : "");
    }

    /**
     * @param r the demo's S1 report, with round pairs
     * @param kafkaVersion the brokers' Kafka version
     * @return the demo's closing sentence: what the table shows, in words
     */
    static String demoSentence(Report r, String kafkaVersion) {
        Scenario s = r.scenario();
        double stockReq =
                r.stat(Variant.STOCK, RoundResult::produceRequestsPerSec).median();
        double kpipeReq =
                r.stat(Variant.KPIPE, RoundResult::produceRequestsPerSec).median();
        return String.format(
                Locale.ROOT,
                "What it shows: with acks=all and a follower that acknowledges every %d ms, stock Kafka %s serves one"
                        + " produce request per connection at a time (%.1f req/s, its limit being 1/W = %s), while kpipe keeps"
                        + " the producer's %d requests in flight on the same connection (%.1f req/s = %s of the %s req/s"
                        + " ceiling), so the same unchanged producer moves %.1fx the records/s, with p99 latency %.2fx stock's.",
                s.windowMs,
                kafkaVersion,
                stockReq,
                Report.fmt(1000.0 / s.windowMs),
                s.maxInFlight,
                kpipeReq,
                Report.pct(kpipeReq / s.ceilingRequestsPerSec()),
                Report.fmt(s.ceilingRequestsPerSec()),
                r.ratio(RoundResult::recordsPerSec).median(),
                r.ratio(RoundResult::p99Ms).median());
    }
}
