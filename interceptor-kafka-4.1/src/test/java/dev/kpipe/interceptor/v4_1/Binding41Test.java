package dev.kpipe.interceptor.v4_1;

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

/** The 4.1-4.3 binding against the Kafka 4.1.2 jars this module compiles and tests with. */
class Binding41Test {

    @ParameterizedTest
    @ValueSource(strings = {"4.1.0", "4.1.2", "4.2.1", "4.3.1"})
    void itsLinesGetThisBinding(String version) throws Exception {
        Interceptor.Binding b = Interceptor.bindingFor(version);
        assertInstanceOf(Binding41.class, b);
        assertEquals("4.1-4.3", b.versionLine());
    }

    @Test
    void everyHookPointExistsInKafka41() {
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), new Binding41().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLinkAgainstKafka41() throws Exception {
        new Binding41().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    @Test
    void theHookListIsCheckedAndInstalledFromOneList() {
        Binding41 b = new Binding41();
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

    /** KIP-890: the hooks that tell when a verified transactional append happened exist in Kafka 4.1.2. */
    @Test
    void everyDeferredDispatchHookPointExists() {
        Binding41 b = new Binding41();
        assertEquals(3, b.deferredDispatchHookPoints().size());
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), b.deferredDispatchHookPoints()));
        assertTrue(b.deferredDispatch());
    }

    /** The 3.8 binding on a 4.1 broker would be refused before anything is installed. */
    @Test
    void the38BindingsHookPointsAreMissingInKafka41() {
        List<String> missing = HookPoint.missing(getClass().getClassLoader(), new Binding38().hookPoints());
        assertTrue(
                missing.contains(
                        "kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, kafka.server.RequestLocal)"),
                missing::toString);
        assertTrue(
                missing.contains("kafka.server.MetadataCache.getTopicName(org.apache.kafka.common.Uuid)"),
                missing::toString);
    }
}
