// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Binding selection by Kafka version, and the hook point checks, on this module's classpath: the core is compiled and
 * tested against the oldest supported line (Kafka 3.8.1) and holds no binding (each is a sibling module, tested
 * there).
 */
class InterceptorTest {

    @ParameterizedTest
    @ValueSource(strings = {"3.7.2", "3.6.0", "2.8.2", "4.5.0", "5.0.0", "4", "unknown", ""})
    void otherVersionsAreRefusedNamingTheVersionAndTheSupportedOnes(String version) {
        UnsupportedBrokerException e =
                assertThrows(UnsupportedBrokerException.class, () -> Interceptor.bindingFor(version));
        assertEquals(
                "kpipe does not support Kafka " + version
                        + " (supported: 3.8.x, 3.9.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x, 4.4.x)",
                e.getMessage());
    }

    /** The bindings live in the interceptor-kafka-* modules, none of which is on this module's classpath. */
    @ParameterizedTest
    @CsvSource({
        "3.8.1, dev.kpipe.interceptor.v3_8.Binding38",
        "3.9.1, dev.kpipe.interceptor.v3_8.Binding38",
        "4.0.2, dev.kpipe.interceptor.v4_0.Binding40",
        "4.1.2, dev.kpipe.interceptor.v4_1.Binding41",
        "4.3.1, dev.kpipe.interceptor.v4_1.Binding41",
        "4.4.0, dev.kpipe.interceptor.v4_4.Binding44"
    })
    void aBindingMissingFromTheJarIsAnUnsupportedBrokerNotALinkageError(String version, String binding) {
        UnsupportedBrokerException e =
                assertThrows(UnsupportedBrokerException.class, () -> Interceptor.bindingFor(version));
        assertTrue(
                e.getMessage()
                        .startsWith("kpipe cannot hook Kafka " + version + ": its binding " + binding
                                + " is missing from the kpipe jar"),
                e.getMessage());
    }

    @Test
    void missingHookPointsAreNamedOneByOne() {
        ClassLoader loader = getClass().getClassLoader();
        List<HookPoint> points = List.of(
                HookPoint.type("kafka.network.Processor"),
                HookPoint.type("org.apache.kafka.network.Request"),
                HookPoint.method("kafka.network.Processor", "close", "java.lang.String"),
                HookPoint.method("kafka.network.Processor", "close", "long"),
                HookPoint.method(
                        "kafka.server.KafkaApis",
                        "handle",
                        "kafka.network.RequestChannel$Request",
                        "org.apache.kafka.server.common.RequestLocal"),
                HookPoint.method(
                        "kafka.server.KafkaApis",
                        "handle",
                        "kafka.network.RequestChannel$Request",
                        "kafka.server.RequestLocal"),
                HookPoint.field("kafka.network.Processor", "listenerName"),
                HookPoint.field("kafka.network.Processor", "noSuchField"));
        assertEquals(
                List.of(
                        "org.apache.kafka.network.Request",
                        "kafka.network.Processor.close(long)",
                        "kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, "
                                + "org.apache.kafka.server.common.RequestLocal)",
                        "kafka.network.Processor.noSuchField"),
                HookPoint.missing(loader, points));
    }
}
