// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import dev.kpipe.spi.ResponseKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The {@code kpipe.*} settings changed at runtime: what {@link KpipePlugin} tells Kafka's dynamic broker config
 * (which keys, which values it rejects), and what {@link KpipeRuntime} does with a change (with a stand-in for the
 * broker hooks; the real ones are exercised by the integration test {@code DynamicConfigIT}).
 */
class KpipeReconfigurationTest {

    private static Map<String, Object> broker(Object... keyValues) {
        Map<String, Object> m = new HashMap<>();
        m.put("broker.id", "1");
        m.put("log.dirs", "/tmp/kafka");
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    private static KpipeConfig config(Object... keyValues) {
        return new KpipeConfig(broker(keyValues));
    }

    // ------------------------------------------------------------------ what Kafka is told

    @Test
    void theDynamicKeysAreEnableTheLimitsAndTheTopicPolicy() {
        assertEquals(
                Set.of(
                        KpipeConfig.ENABLE,
                        KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                        KpipeConfig.MAX_INFLIGHT_BYTES_PER_CONNECTION,
                        KpipeConfig.MAX_INFLIGHT_BYTES,
                        KpipeConfig.MAX_DELAYED_PRODUCE_REQUESTS,
                        KpipeConfig.TOPICS_INCLUDE,
                        KpipeConfig.TOPICS_EXCLUDE,
                        KpipeConfig.TRANSACTIONS_PIPELINED,
                        KpipeConfig.OFFSET_COMMITS_PIPELINED),
                new KpipePlugin().reconfigurableConfigs());
        assertTrue(KpipeConfig.CONFIG_DEF.names().containsAll(KpipeConfig.RECONFIGURABLE_CONFIGS));
        for (String startOnly : List.of(
                KpipeConfig.LISTENERS,
                KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER,
                KpipeConfig.STORAGE_PRESSURE_CLASS,
                KpipeConfig.CLASSIFICATION_POLICY_CLASS)) {
            assertFalse(KpipeConfig.RECONFIGURABLE_CONFIGS.contains(startOnly), startOnly);
        }
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "kpipe.enable | maybe",
                "kpipe.max.inflight.requests.per.connection | 0",
                "kpipe.max.inflight.requests.per.connection | 1001",
                "kpipe.max.inflight.requests.per.connection | many",
                "kpipe.max.inflight.bytes.per.connection | 0",
                "kpipe.max.inflight.bytes | -1",
                "kpipe.max.inflight.bytes | 100MB",
                "kpipe.max.delayed.produce.requests | -1",
                "kpipe.topics.include | orders-[",
                "kpipe.topics.exclude | (audit",
                "kpipe.transactions.pipelined | sometimes",
            })
    void validateReconfigurationRejectsABadValueNamingTheKeyAndChangesNothing(String key, String value) {
        KpipePlugin plugin = new KpipePlugin();
        PipelineCoordinator before = plugin.coordinator();
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> plugin.validateReconfiguration(broker(KpipeConfig.ENABLE, "true", key, value)));
        assertTrue(e.getMessage().contains(key), e.getMessage());
        assertTrue(e.getMessage().contains(value), e.getMessage());
        assertSame(before, plugin.coordinator(), "validation changes nothing");
    }

    @Test
    void validateReconfigurationAcceptsGoodValuesAsStringsLikeKafkaPassesThem() {
        new KpipePlugin()
                .validateReconfiguration(broker(
                        KpipeConfig.ENABLE,
                        "false",
                        KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                        "1000",
                        KpipeConfig.MAX_INFLIGHT_BYTES,
                        "1",
                        KpipeConfig.MAX_INFLIGHT_BYTES_PER_CONNECTION,
                        String.valueOf(Long.MAX_VALUE),
                        KpipeConfig.MAX_DELAYED_PRODUCE_REQUESTS,
                        "0",
                        KpipeConfig.TOPICS_INCLUDE,
                        "orders-.*",
                        KpipeConfig.TOPICS_EXCLUDE,
                        "orders-audit",
                        KpipeConfig.TRANSACTIONS_PIPELINED,
                        "false"));
    }

    // ------------------------------------------------------------------ what a change does

    /** Stands in for the interceptor: counts installs, may fail. */
    private static final class Hooks implements HookInstaller {
        final List<PipelineCoordinator> installed = new ArrayList<>();
        UnsupportedBrokerException failure;

        @Override
        public String install(
                KpipeConfig config,
                PipelineCoordinator<Object, Object> coordinator,
                List<dev.kpipe.spi.NetworkEventListener<Object, Object>> observers,
                dev.kpipe.interceptor.HookCounters counters)
                throws UnsupportedBrokerException {
            if (failure != null) {
                throw failure;
            }
            installed.add(coordinator);
            return "install mode test";
        }
    }

    private final Hooks hooks = new Hooks();
    private final KpipeRuntime runtime = new KpipeRuntime(hooks, "4.4.0", Runnable::run);

    @AfterEach
    void unregisterMetrics() {
        runtime.closeMetrics();
    }

    @Test
    void startedEnabledEveryDynamicSettingIsAppliedToTheRunningCoordinator() {
        runtime.start(config(KpipeConfig.ENABLE, "true"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();
        assertEquals(List.of(coordinator), hooks.installed);
        assertTrue(coordinator.enabled());
        assertNotNull(runtime.metrics());

        runtime.reconfigure(config(
                KpipeConfig.ENABLE,
                "true",
                KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                "3",
                KpipeConfig.MAX_INFLIGHT_BYTES_PER_CONNECTION,
                "4096",
                KpipeConfig.MAX_INFLIGHT_BYTES,
                "1000",
                KpipeConfig.MAX_DELAYED_PRODUCE_REQUESTS,
                "7"));

        assertSame(coordinator, runtime.coordinator(), "the same coordinator: connections keep their state");
        assertEquals(new InflightLimits(3, 4096), coordinator.limits());
        assertSame(runtime.budget(), coordinator.budget());
        assertEquals(1000, coordinator.budget().capacity());
        assertEquals(7, runtime.maxDelayedProduceRequests());
        assertEquals(List.of(coordinator), hooks.installed, "nothing installed again");
    }

    @Test
    void disablingAndReEnablingFlipsTheCoordinatorWithoutReinstalling() {
        runtime.start(config(KpipeConfig.ENABLE, "true"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();

        runtime.reconfigure(config(KpipeConfig.ENABLE, "false"));
        assertFalse(coordinator.enabled());
        runtime.reconfigure(config(KpipeConfig.ENABLE, "true"));
        assertTrue(coordinator.enabled());
        assertEquals(1, hooks.installed.size());
    }

    @Test
    void theTopicPolicyIsReplacedForRequestsReadFromThenOn() {
        runtime.start(config(KpipeConfig.ENABLE, "true"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();
        StubProcessor processor = new StubProcessor();
        assertEquals(Admission.PIPELINED, receiveProduce(coordinator, processor, "c1", KafkaRequests.INCLUDED));

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.TOPICS_EXCLUDE, KafkaRequests.INCLUDED));
        assertEquals(
                Admission.CLASSIC,
                receiveProduce(coordinator, processor, "c2", KafkaRequests.INCLUDED),
                "now excluded: a classic connection is not upgraded");
        assertEquals(Admission.PIPELINED, receiveProduce(coordinator, processor, "c3", KafkaRequests.INCLUDED_2));

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.TOPICS_INCLUDE, "nothing-.*"));
        assertEquals(Admission.CLASSIC, receiveProduce(coordinator, processor, "c4", KafkaRequests.INCLUDED_2));
        assertEquals(Admission.PIPELINED, receiveProduce(coordinator, processor, "c5", "nothing-else"));
    }

    @Test
    void transactionalProduceIsPipelinedByDefaultAndExclusiveOnceTheSettingIsTurnedOff() {
        runtime.start(config(KpipeConfig.ENABLE, "true"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();
        coordinator.onInstalled(
                new BrokerCapabilities("test", java.util.Set.of(org.apache.kafka.common.protocol.ApiKeys.PRODUCE)));
        StubProcessor processor = new StubProcessor();
        assertEquals(Admission.PIPELINED, receiveTransactionalProduce(coordinator, processor, "t1"));

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.TRANSACTIONS_PIPELINED, "false"));
        assertEquals(Admission.CLASSIC, receiveTransactionalProduce(coordinator, processor, "t2"));
        assertEquals(Admission.PIPELINED, receiveProduce(coordinator, processor, "t3", KafkaRequests.INCLUDED));

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.TRANSACTIONS_PIPELINED, "true"));
        assertEquals(Admission.PIPELINED, receiveTransactionalProduce(coordinator, processor, "t4"));
        coordinator.onInstalled(new BrokerCapabilities("9.9", java.util.Set.of()));
        assertEquals(
                Admission.CLASSIC,
                receiveTransactionalProduce(coordinator, processor, "t5"),
                "a broker without deferred dispatch keeps transactional produce exclusive");
    }

    @Test
    void offsetCommitsArePipelinedByDefaultAndExclusiveOnceTheSettingIsTurnedOff() {
        runtime.start(config(KpipeConfig.ENABLE, "true"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();
        StubProcessor processor = new StubProcessor();
        assertEquals(Admission.PIPELINED, receive(coordinator, processor, KafkaRequests.offsetCommit("o1", 1, 10)));

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.OFFSET_COMMITS_PIPELINED, "false"));
        assertEquals(Admission.CLASSIC, receive(coordinator, processor, KafkaRequests.offsetCommit("o2", 1, 11)));
        assertEquals(Admission.PIPELINED, receiveProduce(coordinator, processor, "o3", KafkaRequests.INCLUDED));

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.OFFSET_COMMITS_PIPELINED, "true"));
        assertEquals(Admission.PIPELINED, receive(coordinator, processor, KafkaRequests.offsetCommit("o4", 1, 12)));
    }

    private static Admission receive(
            PipelineCoordinator<Object, Object> coordinator,
            NetworkProcessor<Object, Object> processor,
            KafkaRequests.Parsed p) {
        return coordinator.onRequestRead(processor, new Object(), p.context(), p.body(), p.sizeInBytes());
    }

    @Test
    void startedWithTransactionsOffTransactionalProduceIsExclusive() {
        runtime.start(config(KpipeConfig.ENABLE, "true", KpipeConfig.TRANSACTIONS_PIPELINED, "false"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();
        coordinator.onInstalled(
                new BrokerCapabilities("test", java.util.Set.of(org.apache.kafka.common.protocol.ApiKeys.PRODUCE)));
        assertEquals(Admission.CLASSIC, receiveTransactionalProduce(coordinator, new StubProcessor(), "t1"));
    }

    private static Admission receiveTransactionalProduce(
            PipelineCoordinator<Object, Object> coordinator,
            NetworkProcessor<Object, Object> processor,
            String connectionId) {
        KafkaRequests.Parsed p =
                KafkaRequests.produce(connectionId, 1, (short) -1, "txn-1", false, KafkaRequests.INCLUDED);
        return coordinator.onRequestRead(processor, new Object(), p.context(), p.body(), p.sizeInBytes());
    }

    @Test
    void startedDisabledNothingIsInstalledUntilEnableIsFirstSetThenWithTheSettingsOfThatChange() {
        runtime.start(config(KpipeConfig.ENABLE, "false"));
        assertNull(runtime.coordinator());
        runtime.reconfigure(config(KpipeConfig.ENABLE, "false", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "3"));
        assertNull(runtime.coordinator(), "a limit changed while disabled installs nothing");
        assertTrue(hooks.installed.isEmpty());

        runtime.reconfigure(config(
                KpipeConfig.ENABLE,
                "true",
                KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                "3",
                KpipeConfig.MAX_INFLIGHT_BYTES,
                "5000"));
        PipelineCoordinator<Object, Object> coordinator = runtime.coordinator();
        assertEquals(List.of(coordinator), hooks.installed);
        assertTrue(coordinator.enabled());
        assertEquals(3, coordinator.limits().maxRequests());
        assertEquals(5000, coordinator.budget().capacity());
        assertNotNull(runtime.metrics());

        runtime.reconfigure(config(KpipeConfig.ENABLE, "false"));
        runtime.reconfigure(config(KpipeConfig.ENABLE, "true"));
        assertEquals(1, hooks.installed.size(), "installed once per JVM");
        assertSame(coordinator, runtime.coordinator());
    }

    @Test
    void theRuntimeInstallRunsOffKafkasConfigThreadAndThenAppliesTheChangesThatArrivedMeanwhile() {
        List<Runnable> background = new ArrayList<>();
        KpipeRuntime later = new KpipeRuntime(hooks, "4.4.0", background::add);
        try {
            later.start(config(KpipeConfig.ENABLE, "false"));
            later.reconfigure(
                    config(KpipeConfig.ENABLE, "true", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "3"));
            assertEquals(1, background.size(), "the install is handed to the background");
            assertNull(later.coordinator(), "reconfigure returned before the install");

            later.reconfigure(
                    config(KpipeConfig.ENABLE, "false", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "5"));
            later.reconfigure(
                    config(KpipeConfig.ENABLE, "true", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "7"));
            assertEquals(1, background.size(), "one install at a time");

            background.get(0).run();
            PipelineCoordinator<Object, Object> coordinator = later.coordinator();
            assertEquals(List.of(coordinator), hooks.installed);
            assertEquals(7, coordinator.limits().maxRequests(), "the latest change applies once installed");
            assertTrue(coordinator.enabled());

            later.reconfigure(config(KpipeConfig.ENABLE, "false"));
            assertFalse(coordinator.enabled());
            assertEquals(1, background.size());
        } finally {
            later.closeMetrics();
        }
    }

    @Test
    void aDisableThatArrivesDuringTheRuntimeInstallIsAppliedWhenItIsDone() {
        List<Runnable> background = new ArrayList<>();
        KpipeRuntime later = new KpipeRuntime(hooks, "4.4.0", background::add);
        try {
            later.start(config(KpipeConfig.ENABLE, "false"));
            later.reconfigure(config(KpipeConfig.ENABLE, "true"));
            later.reconfigure(config(KpipeConfig.ENABLE, "false"));
            background.get(0).run();
            assertFalse(later.coordinator().enabled());
        } finally {
            later.closeMetrics();
        }
    }

    @Test
    void aBrokerThatCannotBeHookedAtRuntimeStaysClassicWithoutFailingTheChangeAndIsNotRetried() {
        runtime.start(config(KpipeConfig.ENABLE, "false", KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER, "true"));
        hooks.failure = new UnsupportedBrokerException("kpipe does not support Kafka 9.9.9");

        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER, "true"));
        assertNull(runtime.coordinator());

        hooks.failure = null;
        runtime.reconfigure(config(KpipeConfig.ENABLE, "false", KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER, "true"));
        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER, "true"));
        assertNull(runtime.coordinator());
        assertTrue(hooks.installed.isEmpty());
    }

    @Test
    void atStartAnUnhookableBrokerRefusesToStartOnlyWhenToldTo() {
        hooks.failure = new UnsupportedBrokerException("kpipe does not support Kafka 9.9.9");
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> runtime.start(
                        config(KpipeConfig.ENABLE, "true", KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER, "true")));
        assertTrue(e.getMessage().contains("9.9.9") && e.getMessage().contains(KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER));
        assertThrows(
                ConfigException.class,
                () -> runtime.start(config(KpipeConfig.ENABLE, "true", KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER, "true")),
                "not started: a second configure (combined mode) refuses in the same way");

        KpipeRuntime lenient = new KpipeRuntime(hooks, "9.9.9", Runnable::run);
        lenient.start(config(KpipeConfig.ENABLE, "true"));
        assertNull(lenient.coordinator());
    }

    @Test
    void onlyTheFirstStartCountsLaterConfigureCallsDoNotRevertADynamicChange() {
        runtime.start(config(KpipeConfig.ENABLE, "true", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "5"));
        runtime.reconfigure(config(KpipeConfig.ENABLE, "true", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "9"));
        runtime.start(config(KpipeConfig.ENABLE, "true", KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "5"));
        assertEquals(9, runtime.coordinator().limits().maxRequests());
        assertEquals(1, hooks.installed.size());
    }

    @ParameterizedTest(name = "capacity {0}")
    @CsvSource({
        "1, 0",
        "2, 1",
        "9, 8",
        "10, 9",
        "100, 90",
        "104857600, 94371840",
        "9223372036854775807, 8301034833169298226"
    })
    void theLowWatermarkIsNinetyPercentWithoutOverflow(long capacity, long expected) {
        assertEquals(expected, PipelineState.lowWatermark(capacity));
        assertTrue(PipelineState.lowWatermark(capacity) < capacity);
    }

    private static Admission receiveProduce(
            PipelineCoordinator<Object, Object> coordinator,
            NetworkProcessor<Object, Object> processor,
            String connectionId,
            String topic) {
        KafkaRequests.Parsed p = KafkaRequests.produce(connectionId, 1, (short) 1, null, false, topic);
        return coordinator.onRequestRead(processor, new Object(), p.context(), p.body(), p.sizeInBytes());
    }

    /** Only what admitting a first request uses. */
    private static final class StubProcessor implements NetworkProcessor<Object, Object> {

        @Override
        public String listenerName() {
            return "PLAINTEXT";
        }

        @Override
        public int id() {
            return 0;
        }

        @Override
        public void close(String connectionId) {}

        @Override
        public void mute(String connectionId) {}

        @Override
        public void unmute(String connectionId) {}

        @Override
        public boolean isOpen(String connectionId) {
            return true;
        }

        @Override
        public void release(Object request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void handBack(String connectionId, Object heldRequest) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void beginReauthentication(String connectionId, Reauthentication reauthentication) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object pollResponse() {
            return null;
        }

        @Override
        public void discard(Object response) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void wakeup() {}

        @Override
        public ResponseKind kindOf(Object response) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object requestOf(Object response) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RequestContext contextOf(Object request) {
            throw new UnsupportedOperationException();
        }
    }
}
