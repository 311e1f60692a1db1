package dev.kpipe.interceptor.v3_8;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The 3.8-3.9 binding against the Kafka 3.8.1 jars this module compiles and tests with. */
class Binding38Test {

    @ParameterizedTest
    @ValueSource(strings = {"3.8.0", "3.8.1", "3.9.0", "3.9.1"})
    void itsLinesGetThisBinding(String version) throws Exception {
        Interceptor.Binding b = Interceptor.bindingFor(version);
        assertInstanceOf(Binding38.class, b);
        assertEquals("3.8-3.9", b.versionLine());
    }

    @Test
    void everyHookPointExistsInKafka38() {
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), new Binding38().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLinkAgainstKafka38() throws Exception {
        new Binding38().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    @Test
    void theHookListIsCheckedAndInstalledFromOneList() {
        Binding38 b = new Binding38();
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

    /** KIP-890: the hooks that tell when a verified transactional append happened exist in Kafka 3.8.1. */
    @Test
    void everyDeferredDispatchHookPointExists() {
        Binding38 b = new Binding38();
        assertEquals(3, b.deferredDispatchHookPoints().size());
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), b.deferredDispatchHookPoints()));
        assertTrue(b.deferredDispatch());
    }

    /** A binding for 4.x ({@code org.apache.kafka.server.common.RequestLocal}) on a 3.8 broker would be refused. */
    @Test
    void the4xRequestLocalIsMissingInKafka38() {
        assertEquals(
                List.of("kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, "
                        + "org.apache.kafka.server.common.RequestLocal)"),
                HookPoint.missing(
                        getClass().getClassLoader(),
                        List.of(HookPoint.method(
                                "kafka.server.KafkaApis",
                                "handle",
                                RequestModel38.REQUEST,
                                "org.apache.kafka.server.common.RequestLocal"))));
    }
}
