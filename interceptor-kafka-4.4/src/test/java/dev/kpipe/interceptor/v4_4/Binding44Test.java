package dev.kpipe.interceptor.v4_4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The 4.4 binding against the Kafka 4.4.0 jars this module compiles and tests with. */
class Binding44Test {

    @ParameterizedTest
    @ValueSource(strings = {"4.4.0", "4.4.1", "4.4.0-SNAPSHOT"})
    void itsLinesGetThisBinding(String version) throws Exception {
        Interceptor.Binding b = Interceptor.bindingFor(version);
        assertInstanceOf(Binding44.class, b);
        assertEquals("4.4", b.versionLine());
    }

    @Test
    void everyHookPointExistsInKafka44() {
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), new Binding44().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLinkAgainstKafka44() throws Exception {
        new Binding44().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    @Test
    void theHookListIsCheckedAndInstalledFromOneList() {
        Binding44 b = new Binding44();
        List<String> checked = b.hookPoints().stream().map(HookPoint::toString).toList();
        assertTrue(
                b.advisedMethods().stream()
                        .allMatch(m -> checked.contains(m.method().toString())),
                checked::toString);
        assertEquals(
                List.of(
                        "kafka.network.Processor",
                        "kafka.network.RequestChannel",
                        "kafka.server.KafkaApis",
                        "org.apache.kafka.common.network.KafkaChannel",
                        "org.apache.kafka.server.transaction.AddPartitionsToTxnManager",
                        "kafka.server.KafkaRequestHandler$",
                        "org.apache.kafka.network.Request"),
                b.transformedClasses());
        b.disableDeferredDispatch();
        assertEquals(
                List.of(
                        "kafka.network.Processor",
                        "kafka.network.RequestChannel",
                        "kafka.server.KafkaApis",
                        "org.apache.kafka.common.network.KafkaChannel"),
                b.transformedClasses());
    }

    /** KIP-890: the hooks that tell when a verified transactional append happened exist in Kafka 4.4.0. */
    @Test
    void everyDeferredDispatchHookPointExists() {
        Binding44 b = new Binding44();
        assertEquals(3, b.deferredDispatchHookPoints().size());
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), b.deferredDispatchHookPoints()));
        assertTrue(b.deferredDispatch());
    }

    /** The 3.8–4.3 request model's Scala request class is gone in 4.4. */
    @Test
    void theScalaRequestIsMissingInKafka44() {
        assertEquals(
                List.of("kafka.network.RequestChannel$Request"),
                HookPoint.missing(
                        getClass().getClassLoader(), List.of(HookPoint.type("kafka.network.RequestChannel$Request"))));
    }
}
