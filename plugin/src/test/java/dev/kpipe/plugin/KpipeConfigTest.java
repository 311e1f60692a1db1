// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KpipeConfigTest {

    private static KpipeConfig config(Object... keyValues) {
        Map<String, Object> m = new HashMap<>();
        m.put("broker.id", "1");
        m.put("log.dirs", "/tmp/kafka");
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return new KpipeConfig(m);
    }

    private static ConfigException bad(Object... keyValues) {
        return assertThrows(ConfigException.class, () -> config(keyValues));
    }

    @Test
    void misspelledKpipeKeysAreNamedAndOtherKeysAreNot() {
        KpipeConfig c = config(
                "kpipe.enabled",
                "true",
                "kpipe.max.inflight.byte",
                "1",
                "kpipe.enable",
                "true",
                "num.io.threads",
                "8",
                "kpipeline.x",
                "1");
        assertEquals(new java.util.TreeSet<>(Set.of("kpipe.enabled", "kpipe.max.inflight.byte")), c.unknownKeys());
        assertTrue(config("kpipe.enable", "true", "kpipe.max.inflight.bytes", "1048576")
                .unknownKeys()
                .isEmpty());
    }

    @Test
    void defaults() {
        KpipeConfig c = config();
        assertFalse(c.enabled());
        assertFalse(c.failOnUnsupportedBroker());
        assertEquals(KpipeConfig.DEFAULT_MAX_INFLIGHT_REQUESTS_PER_CONNECTION, c.maxInflightRequestsPerConnection());
        assertEquals(KpipeConfig.DEFAULT_MAX_INFLIGHT_BYTES_PER_CONNECTION, c.maxInflightBytesPerConnection());
        assertEquals(".*", c.topicsInclude().pattern());
        assertNull(c.topicsExclude(), "empty exclude: none excluded");
        assertEquals(Set.of("PLAINTEXT"), c.pipelinedListeners(), "Kafka's default listeners: PLAINTEXT://:9092");
    }

    @Test
    void valuesAreParsedFromStringsAsInServerProperties() {
        KpipeConfig c = config(
                KpipeConfig.ENABLE,
                "true",
                KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                "2",
                KpipeConfig.MAX_INFLIGHT_BYTES_PER_CONNECTION,
                "1048576",
                KpipeConfig.TOPICS_INCLUDE,
                "orders-.*",
                KpipeConfig.TOPICS_EXCLUDE,
                "orders-audit");
        assertTrue(c.enabled());
        assertEquals(2, c.maxInflightRequestsPerConnection());
        assertEquals(1_048_576L, c.maxInflightBytesPerConnection());
        assertTrue(c.topicsInclude().matcher("orders-eu").matches());
        assertTrue(c.topicsExclude().matcher("orders-audit").matches());
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "kpipe.max.inflight.requests.per.connection, 0, 1",
        "kpipe.max.inflight.requests.per.connection, -5, 1",
        "kpipe.max.inflight.requests.per.connection, 1001, 1000",
        "kpipe.max.inflight.bytes.per.connection, 0, 1",
        "kpipe.max.inflight.bytes.per.connection, -1, 1",
    })
    void outOfRangeValuesFailNamingTheKeyAndTheBound(String key, String value, String bound) {
        ConfigException e = bad(key, value);
        assertTrue(e.getMessage().contains(key), e.getMessage());
        assertTrue(e.getMessage().contains(value), e.getMessage());
        assertTrue(e.getMessage().matches("(?s).*\\b" + bound + "\\b.*"), e.getMessage());
    }

    @Test
    void theDocumentedRangesAreTheValidatorsOnes() {
        String doc = KpipeConfig.CONFIG_DEF.toRst();
        assertTrue(doc.contains("[1,...,1000]"), "requests range documented");
        assertTrue(doc.contains("[1,...]"), "bytes range documented");
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "kpipe.max.inflight.requests.per.connection, many",
        "kpipe.max.inflight.bytes.per.connection, 64MB",
        "kpipe.enable, yes",
        "kpipe.fail.on.unsupported.broker, 1",
    })
    void malformedValuesFailNamingTheKey(String key, String value) {
        ConfigException e = bad(key, value);
        assertTrue(e.getMessage().contains(key), e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"kpipe.topics.include", "kpipe.topics.exclude"})
    void invalidRegexFailsNamingTheKey(String key) {
        ConfigException e = bad(key, "orders-(");
        assertTrue(e.getMessage().contains(key), e.getMessage());
        assertTrue(e.getMessage().contains("not a valid regular expression"), e.getMessage());
    }

    @Test
    void boundaryValuesAreAccepted() {
        assertEquals(
                1, config(KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, "1").maxInflightRequestsPerConnection());
        assertEquals(
                1000,
                config(KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION, 1000).maxInflightRequestsPerConnection());
        assertEquals(
                1L, config(KpipeConfig.MAX_INFLIGHT_BYTES_PER_CONNECTION, "1").maxInflightBytesPerConnection());
    }

    @Test
    void everyBrokerListenerButTheControllerOnesIsPipelinedByDefault() {
        KpipeConfig c = config(
                "listeners",
                "PLAINTEXT://:9092,CONTROLLER://:9093, ssl://host:9094,INTERNAL://:9095",
                "controller.listener.names",
                "CONTROLLER");
        assertEquals(Set.of("PLAINTEXT", "SSL", "INTERNAL"), c.pipelinedListeners());
    }

    @Test
    void severalControllerListenersAreAllExcludedWhateverTheirCase() {
        KpipeConfig c = config(
                "listeners",
                List.of("PLAINTEXT://:9092", "controller://:9093", "CONTROLLER2://:9094"),
                "controller.listener.names",
                "Controller,controller2");
        assertEquals(Set.of("PLAINTEXT"), c.pipelinedListeners());
    }

    @Test
    void aControllerOnlyNodePipelinesNothing() {
        KpipeConfig c = config(
                "process.roles",
                "controller",
                "listeners",
                "CONTROLLER://:9093",
                "controller.listener.names",
                "CONTROLLER");
        assertEquals(Set.of(), c.pipelinedListeners());
    }

    @Test
    void configuredListenersAreUsedAsGivenUpperCased() {
        KpipeConfig c = config(
                KpipeConfig.LISTENERS,
                "plaintext, Internal",
                "listeners",
                "PLAINTEXT://:9092,INTERNAL://:9095,EXTERNAL://:9096",
                "controller.listener.names",
                "CONTROLLER");
        assertEquals(Set.of("PLAINTEXT", "INTERNAL"), c.pipelinedListeners());
    }

    @Test
    void configuringAControllerListenerFailsNamingTheKey() {
        KpipeConfig c = config(
                KpipeConfig.LISTENERS,
                "PLAINTEXT,controller",
                "listeners",
                "PLAINTEXT://:9092,CONTROLLER://:9093",
                "controller.listener.names",
                "CONTROLLER");
        ConfigException e = assertThrows(ConfigException.class, c::pipelinedListeners);
        assertTrue(e.getMessage().contains(KpipeConfig.LISTENERS), e.getMessage());
        assertTrue(e.getMessage().contains("CONTROLLER"), e.getMessage());
    }

    @Test
    void effectiveSettingsListEveryKpipeKeyInOrder() {
        Map<String, Object> settings = config(KpipeConfig.ENABLE, "true").effectiveSettings();
        assertEquals(
                List.of(
                        KpipeConfig.CLASSIFICATION_POLICY_CLASS,
                        KpipeConfig.ENABLE,
                        KpipeConfig.FAIL_ON_UNSUPPORTED_BROKER,
                        KpipeConfig.LISTENERS,
                        KpipeConfig.MAX_DELAYED_PRODUCE_REQUESTS,
                        KpipeConfig.MAX_INFLIGHT_BYTES,
                        KpipeConfig.MAX_INFLIGHT_BYTES_PER_CONNECTION,
                        KpipeConfig.MAX_INFLIGHT_REQUESTS_PER_CONNECTION,
                        KpipeConfig.OFFSET_COMMITS_PIPELINED,
                        KpipeConfig.SPI_OBSERVER_CLASSES,
                        KpipeConfig.STORAGE_PRESSURE_CLASS,
                        KpipeConfig.TOPICS_EXCLUDE,
                        KpipeConfig.TOPICS_INCLUDE,
                        KpipeConfig.TRANSACTIONS_PIPELINED),
                List.copyOf(settings.keySet()));
        assertEquals(true, settings.get(KpipeConfig.ENABLE));
    }

    @Test
    void saslListenersWithReauthenticationArePipelinedToo() {
        KpipeConfig c = config(
                "listeners",
                "PLAINTEXT://:9092,SASL://:9094,CONTROLLER://:9093",
                "listener.security.protocol.map",
                "PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "controller.listener.names",
                "CONTROLLER",
                "listener.name.sasl.scram-sha-512.connections.max.reauth.ms",
                "60000");
        assertEquals(Set.of("PLAINTEXT", "SASL"), c.pipelinedListeners());
    }
}
