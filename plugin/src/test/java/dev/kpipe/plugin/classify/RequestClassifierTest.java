// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import static dev.kpipe.plugin.testkit.KafkaRequests.EXCLUDED;
import static dev.kpipe.plugin.testkit.KafkaRequests.INCLUDED;
import static dev.kpipe.plugin.testkit.KafkaRequests.INCLUDED_2;
import static org.apache.kafka.common.internals.Topic.GROUP_METADATA_TOPIC_NAME;
import static org.apache.kafka.common.internals.Topic.SHARE_GROUP_STATE_TOPIC_NAME;
import static org.apache.kafka.common.internals.Topic.TRANSACTION_STATE_TOPIC_NAME;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.plugin.testkit.KafkaRequests.Parsed;
import dev.kpipe.plugin.testkit.KafkaRequests.Topic;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link RequestClassifier} on real requests, serialized and parsed back as the broker parses them. */
class RequestClassifierTest {

    private static final String CONN = "127.0.0.1:9092-127.0.0.1:50000-0";

    private final RequestClassifier classifier = new RequestClassifier(KafkaRequests.policy());

    private RequestClass classify(Parsed p) {
        return classifier.classify(p.apiKey(), p.body());
    }

    private static Parsed produce(short acks, String transactionalId, short version, Topic... topics) {
        return KafkaRequests.parse(CONN, 17, KafkaRequests.produce(acks, transactionalId, List.of(topics)), version);
    }

    private static Parsed produceByName(short acks, String... topics) {
        return produce(
                acks,
                null,
                KafkaRequests.PRODUCE_BY_NAME,
                java.util.Arrays.stream(topics).map(Topic::named).toArray(Topic[]::new));
    }

    private static Parsed produceById(short acks, Uuid... ids) {
        return produce(
                acks,
                null,
                KafkaRequests.PRODUCE_BY_ID,
                java.util.Arrays.stream(ids).map(Topic::byId).toArray(Topic[]::new));
    }

    @ParameterizedTest(name = "acks={0}")
    @ValueSource(shorts = {-1, 0, 1})
    void nonTransactionalProduceToAnIncludedTopicIsPipelinedWhateverTheAcks(short acks) {
        assertEquals(RequestClass.PIPELINED, classify(produceByName(acks, INCLUDED)));
        assertEquals(RequestClass.PIPELINED, classify(produceByName(acks, INCLUDED, INCLUDED_2)));
    }

    @ParameterizedTest(name = "acks={0}")
    @ValueSource(shorts = {-1, 0, 1})
    void transactionalProduceIsExclusiveUntilTheBrokerReportsDeferredDispatch(short acks) {
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produce(acks, "txn-1", KafkaRequests.PRODUCE_BY_NAME, Topic.named(INCLUDED))));
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produce(acks, "txn-1", KafkaRequests.PRODUCE_BY_ID, Topic.byId(KafkaRequests.INCLUDED_ID))));
    }

    @Test
    void transactionalProduceIsPipelinedWithDeferredDispatchAndTheSettingOnAndOnlyToIncludedTopics() {
        classifier.deferredDispatch(Set.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT));
        assertTrue(classifier.isOn(PipelinedApi.Switch.TRANSACTIONS), "kpipe.transactions.pipelined defaults to true");
        assertEquals(
                RequestClass.PIPELINED,
                classify(produce((short) -1, "txn-1", KafkaRequests.PRODUCE_BY_NAME, Topic.named(INCLUDED))));
        assertEquals(
                RequestClass.PIPELINED,
                classify(produce(
                        (short) -1,
                        "txn-1",
                        KafkaRequests.PRODUCE_BY_NAME,
                        Topic.named(INCLUDED),
                        Topic.named(INCLUDED_2))));
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produce(
                        (short) -1,
                        "txn-1",
                        KafkaRequests.PRODUCE_BY_NAME,
                        Topic.named(INCLUDED),
                        Topic.named(EXCLUDED))));
        classifier.switchOn(PipelinedApi.Switch.TRANSACTIONS, false);
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produce((short) -1, "txn-1", KafkaRequests.PRODUCE_BY_NAME, Topic.named(INCLUDED))));
        assertEquals(RequestClass.PIPELINED, classify(produceByName((short) -1, INCLUDED)), "others unaffected");
        classifier.switchOn(PipelinedApi.Switch.TRANSACTIONS, true);
        classifier.deferredDispatch(Set.of());
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produce((short) -1, "txn-1", KafkaRequests.PRODUCE_BY_NAME, Topic.named(INCLUDED))));
    }

    /** The transaction's other requests always drain a pipelined connection first. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = ApiKeys.class,
            names = {"FIND_COORDINATOR", "INIT_PRODUCER_ID", "ADD_PARTITIONS_TO_TXN", "ADD_OFFSETS_TO_TXN", "END_TXN"})
    void theOtherTransactionApisStayExclusive(ApiKeys api) {
        classifier.deferredDispatch(Set.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT));
        assertEquals(RequestClass.EXCLUSIVE, classifier.classify(api, null));
    }

    @Test
    void produceWithOneExcludedTopicAmongIncludedOnesIsExclusive() {
        assertEquals(RequestClass.EXCLUSIVE, classify(produceByName((short) 1, INCLUDED, EXCLUDED)));
        assertEquals(RequestClass.EXCLUSIVE, classify(produceByName((short) 1, EXCLUDED, INCLUDED)));
        assertEquals(RequestClass.EXCLUSIVE, classify(produceByName((short) -1, EXCLUDED)));
    }

    @Test
    void produceToAnInternalTopicIsExclusiveEvenWhenTheIncludeRegexMatchesIt() {
        assertEquals(RequestClass.EXCLUSIVE, classify(produceByName((short) -1, GROUP_METADATA_TOPIC_NAME)));
        assertEquals(RequestClass.EXCLUSIVE, classify(produceByName((short) -1, TRANSACTION_STATE_TOPIC_NAME)));
        assertEquals(
                RequestClass.EXCLUSIVE, classify(produceByName((short) 1, INCLUDED, SHARE_GROUP_STATE_TOPIC_NAME)));
    }

    @Test
    void produceOutsideTheIncludeRegexIsExclusive() {
        RequestClassifier narrow = new RequestClassifier(new TopicPolicy(Pattern.compile("orders|payments"), null));
        assertEquals(
                RequestClass.PIPELINED,
                narrow.classify(
                        ApiKeys.PRODUCE, produceByName((short) 1, INCLUDED).body()));
        assertEquals(
                RequestClass.EXCLUSIVE,
                narrow.classify(
                        ApiKeys.PRODUCE, produceByName((short) 1, "orders-eu").body()));
        assertEquals(
                RequestClass.EXCLUSIVE,
                narrow.classify(
                        ApiKeys.PRODUCE,
                        produceByName((short) 1, INCLUDED, "other").body()));
    }

    @Test
    void produceNamingTopicsByIdIsPipelinedOnlyWhenEveryIdResolvesToAPipelinedTopic() {
        Parsed resolvable = produceById((short) -1, KafkaRequests.INCLUDED_ID, KafkaRequests.INCLUDED_2_ID);
        assertEquals(
                "",
                ((org.apache.kafka.common.requests.ProduceRequest) resolvable.body())
                        .data()
                        .topicData()
                        .iterator()
                        .next()
                        .name(),
                "v13 carries no topic names");
        assertEquals(RequestClass.EXCLUSIVE, classify(resolvable), "no resolver yet");

        classifier.topicNames(KafkaRequests.TOPIC_NAMES);
        assertEquals(RequestClass.PIPELINED, classify(resolvable));
        assertEquals(RequestClass.PIPELINED, classify(produceById((short) 0, KafkaRequests.INCLUDED_ID)));
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produceById((short) 1, KafkaRequests.INCLUDED_ID, KafkaRequests.EXCLUDED_ID)));
        assertEquals(RequestClass.EXCLUSIVE, classify(produceById((short) 1, KafkaRequests.UNKNOWN_ID)), "unknown id");
        assertEquals(
                RequestClass.EXCLUSIVE,
                classify(produceById((short) 1, KafkaRequests.INCLUDED_ID, KafkaRequests.UNKNOWN_ID)));
    }

    @Test
    void topicIdResolvingToAnInternalTopicIsExclusive() {
        Uuid internal = new Uuid(9, 9);
        classifier.topicNames(id -> id.equals(internal) ? GROUP_METADATA_TOPIC_NAME : null);
        assertEquals(RequestClass.EXCLUSIVE, classify(produceById((short) 1, internal)));
    }

    @Test
    void produceWithoutTopicsIsExclusive() {
        assertEquals(RequestClass.EXCLUSIVE, classify(produce((short) 1, null, KafkaRequests.PRODUCE_BY_NAME)));
    }

    @Test
    void cheapReadOnlyRequestsArePipelinedWithoutUpgrading() {
        assertEquals(RequestClass.PIPELINED_NO_UPGRADE, classify(KafkaRequests.metadata(CONN, 1)));
        assertEquals(RequestClass.PIPELINED_NO_UPGRADE, classify(KafkaRequests.apiVersions(CONN, 2)));
        assertEquals(RequestClass.PIPELINED_NO_UPGRADE, classify(KafkaRequests.getTelemetrySubscriptions(CONN, 3)));
        assertEquals(RequestClass.PIPELINED_NO_UPGRADE, classify(KafkaRequests.pushTelemetry(CONN, 4)));
    }

    @Test
    void fetchAndOtherRequestsAreExclusive() {
        assertEquals(RequestClass.EXCLUSIVE, classify(KafkaRequests.fetch(CONN, 5)));
        assertEquals(RequestClass.EXCLUSIVE, classify(KafkaRequests.findCoordinator(CONN, 6)));
    }

    /**
     * Only PRODUCE bodies are inspected; every other API is decided by its key alone: its row of the table, or
     * exclusive without one.
     */
    @Test
    void everyOtherApiIsExclusiveExceptTheRowsOfTheTable() {
        classifier.deferredDispatch(Set.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT));
        Set<ApiKeys> noUpgrade = EnumSet.of(
                ApiKeys.METADATA,
                ApiKeys.API_VERSIONS,
                ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS,
                ApiKeys.PUSH_TELEMETRY,
                ApiKeys.HEARTBEAT,
                ApiKeys.CONSUMER_GROUP_HEARTBEAT);
        Set<ApiKeys> upgrade = EnumSet.of(ApiKeys.OFFSET_COMMIT, ApiKeys.TXN_OFFSET_COMMIT);
        for (ApiKeys key : ApiKeys.values()) {
            if (key == ApiKeys.PRODUCE) {
                continue;
            }
            RequestClass expected = noUpgrade.contains(key)
                    ? RequestClass.PIPELINED_NO_UPGRADE
                    : upgrade.contains(key) ? RequestClass.PIPELINED : RequestClass.EXCLUSIVE;
            assertEquals(expected, classifier.classify(key, null), key.name());
        }
    }

    /** Group requests that wait for other members, end a membership or read committed offsets drain first. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = ApiKeys.class,
            names = {"JOIN_GROUP", "SYNC_GROUP", "LEAVE_GROUP", "OFFSET_FETCH", "DESCRIBE_GROUPS", "FETCH"})
    void groupRequestsThatCannotBePipelinedStayExclusive(ApiKeys api) {
        assertEquals(RequestClass.EXCLUSIVE, classifier.classify(api, null));
    }

    @Test
    void offsetCommitsAndHeartbeatsAreExclusiveWhileTheSettingIsOff() {
        classifier.deferredDispatch(Set.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT));
        assertTrue(
                classifier.isOn(PipelinedApi.Switch.OFFSET_COMMITS), "kpipe.offset.commits.pipelined defaults to true");
        assertEquals(RequestClass.PIPELINED, classify(KafkaRequests.offsetCommit(CONN, 3, 10)));
        assertEquals(RequestClass.PIPELINED, classify(KafkaRequests.txnOffsetCommit(CONN, 4, 10)));
        classifier.switchOn(PipelinedApi.Switch.OFFSET_COMMITS, false);
        for (ApiKeys api : List.of(
                ApiKeys.OFFSET_COMMIT,
                ApiKeys.TXN_OFFSET_COMMIT,
                ApiKeys.HEARTBEAT,
                ApiKeys.CONSUMER_GROUP_HEARTBEAT)) {
            assertEquals(RequestClass.EXCLUSIVE, classifier.classify(api, null), api.name());
        }
        assertEquals(RequestClass.PIPELINED, classify(produceByName((short) -1, INCLUDED)), "produce unaffected");
        assertEquals(RequestClass.PIPELINED_NO_UPGRADE, classifier.classify(ApiKeys.METADATA, null));
    }

    /**
     * A transactional offset commit's write follows the verification of its offsets partition (KIP-890): pipelined
     * only where the broker reports that step, and only with kpipe.transactions.pipelined on as well.
     */
    @Test
    void aTransactionalOffsetCommitNeedsDeferredDispatchForItsApiAndBothSettings() {
        Parsed commit = KafkaRequests.txnOffsetCommit(CONN, 4, 10);
        assertEquals(RequestClass.EXCLUSIVE, classify(commit), "until the broker reports deferred dispatch");
        classifier.deferredDispatch(Set.of(ApiKeys.PRODUCE));
        assertEquals(RequestClass.EXCLUSIVE, classify(commit), "reported for produce only");
        classifier.deferredDispatch(Set.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT));
        assertEquals(RequestClass.PIPELINED, classify(commit));
        classifier.switchOn(PipelinedApi.Switch.TRANSACTIONS, false);
        assertEquals(RequestClass.EXCLUSIVE, classify(commit), "kpipe.transactions.pipelined off");
        classifier.switchOn(PipelinedApi.Switch.TRANSACTIONS, true);
        assertEquals(RequestClass.PIPELINED, classify(KafkaRequests.offsetCommit(CONN, 5, 10)));
    }

    /** Each row's class, dispatch point and switch, as the table documents them. */
    @Test
    void theTableOfPipelinedApis() {
        assertEquals(9, PipelinedApi.values().length);
        for (PipelinedApi row : PipelinedApi.values()) {
            assertEquals(row, PipelinedApi.of(row.api()));
            boolean transactional = row == PipelinedApi.PRODUCE || row == PipelinedApi.TXN_OFFSET_COMMIT;
            assertEquals(
                    transactional ? DispatchPoint.AFTER_VERIFICATION : DispatchPoint.HANDLE_RETURN,
                    row.dispatchPoint(),
                    row.name());
            assertEquals(row == PipelinedApi.PRODUCE, row.topicPolicy(), row.name());
        }
        assertTrue(PipelinedApi.TXN_OFFSET_COMMIT.transactional(null), "every TXN_OFFSET_COMMIT");
        assertFalse(PipelinedApi.OFFSET_COMMIT.transactional(null));
        assertEquals("txn-offset-commit", PipelinedApi.TXN_OFFSET_COMMIT.metricLabel());
        assertEquals(null, PipelinedApi.of(ApiKeys.JOIN_GROUP));
    }

    /** The switches with a key are the settings, in the settings table's order; NONE has none and stays on. */
    @Test
    void switchesAreTheSettingsAndNoneStaysOn() {
        assertEquals(
                List.of(PipelinedApi.Switch.TRANSACTIONS, PipelinedApi.Switch.OFFSET_COMMITS),
                PipelinedApi.Switch.settings());
        assertEquals("kpipe.transactions.pipelined", PipelinedApi.Switch.TRANSACTIONS.key());
        assertEquals("kpipe.offset.commits.pipelined", PipelinedApi.Switch.OFFSET_COMMITS.key());
        assertEquals(null, PipelinedApi.Switch.NONE.key());
        classifier.switchOn(PipelinedApi.Switch.NONE, false);
        assertTrue(classifier.isOn(PipelinedApi.Switch.NONE));
        classifier.switchOn(PipelinedApi.Switch.OFFSET_COMMITS, false);
        assertTrue(classifier.isOn(PipelinedApi.Switch.TRANSACTIONS), "one switch's state is its own");
        assertFalse(classifier.isOn(PipelinedApi.Switch.OFFSET_COMMITS));
    }

    @Test
    void topicPolicyDecisionsAreStableAcrossTheCache() {
        TopicPolicy policy = KafkaRequests.policy();
        for (int i = 0; i < 3; i++) {
            assertTrue(policy.pipelines(INCLUDED));
            assertFalse(policy.pipelines(EXCLUDED));
            assertFalse(policy.pipelines("__consumer_offsets"));
        }
        TopicPolicy noExclude = new TopicPolicy(Pattern.compile(".*"), null);
        assertTrue(noExclude.pipelines(EXCLUDED));
    }
}
