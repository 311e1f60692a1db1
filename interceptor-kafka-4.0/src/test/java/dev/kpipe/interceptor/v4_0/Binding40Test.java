package dev.kpipe.interceptor.v4_0;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.v3_8.Binding38;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The 4.0 binding against the Kafka 4.0.2 jars this module compiles and tests with. */
class Binding40Test {

    @ParameterizedTest
    @ValueSource(strings = {"4.0.0", "4.0.2"})
    void itsLinesGetThisBinding(String version) throws Exception {
        Interceptor.Binding b = Interceptor.bindingFor(version);
        assertInstanceOf(Binding40.class, b);
        assertEquals("4.0", b.versionLine());
    }

    @Test
    void everyHookPointExistsInKafka40() {
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), new Binding40().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLinkAgainstKafka40() throws Exception {
        new Binding40().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    @Test
    void theHookListIsCheckedAndInstalledFromOneList() {
        Binding40 b = new Binding40();
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
                        "kafka.server.AddPartitionsToTxnManager",
                        "kafka.server.KafkaRequestHandler$",
                        "kafka.network.RequestChannel$Request"),
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

    /** KIP-890: the hooks that tell when a verified transactional append happened exist in Kafka 4.0.2. */
    @Test
    void everyDeferredDispatchHookPointExists() {
        Binding40 b = new Binding40();
        assertEquals(3, b.deferredDispatchHookPoints().size());
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), b.deferredDispatchHookPoints()));
        assertTrue(b.deferredDispatch());
    }

    /** The 3.8 binding on a 4.0 broker would be refused before anything is installed. */
    @Test
    void the38BindingsHookPointsAreMissingInKafka40() {
        List<String> missing = HookPoint.missing(getClass().getClassLoader(), new Binding38().hookPoints());
        assertEquals(
                List.of(
                        "kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, kafka.server.RequestLocal)",
                        "kafka.server.DelayedOperationPurgatory.numDelayed()"),
                missing);
    }

    /** ... and so would a binding that reads the Java metadata cache (4.1 on). */
    @Test
    void theJavaMetadataCacheIsMissingInKafka40() {
        assertEquals(
                List.of("org.apache.kafka.metadata.MetadataCache.getTopicName(org.apache.kafka.common.Uuid)"),
                HookPoint.missing(
                        getClass().getClassLoader(),
                        List.of(HookPoint.method(
                                "org.apache.kafka.metadata.MetadataCache",
                                "getTopicName",
                                "org.apache.kafka.common.Uuid"))));
    }
}
