package dev.kpipe.interceptor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.v4_4.Binding44;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Binding selection by Kafka version, and the hook point checks, on this module's Kafka (4.4) classpath. */
class InterceptorTest {

    @ParameterizedTest
    @ValueSource(strings = {"4.4.0", "4.4.1", "4.4.0-SNAPSHOT"})
    void kafka44GetsThe44Binding(String version) throws Exception {
        Interceptor.Binding b = Interceptor.bindingFor(version);
        assertInstanceOf(Binding44.class, b);
        assertEquals("4.4", b.versionLine());
    }

    @ParameterizedTest
    @ValueSource(strings = {"3.9.1", "4.0.0", "4.1.1", "4.5.0", "5.0.0", "4", "unknown", ""})
    void otherVersionsAreRefusedNamingTheVersionAndTheSupportedOnes(String version) {
        UnsupportedBrokerException e = assertThrows(UnsupportedBrokerException.class,
            () -> Interceptor.bindingFor(version));
        assertEquals("kpipe does not support Kafka " + version + " (supported: 4.2.x, 4.3.x, 4.4.x)", e.getMessage());
    }

    /** The 4.2 binding lives in interceptor-kafka-4.2, which is not on this module's classpath. */
    @Test
    void aBindingMissingFromTheJarIsAnUnsupportedBrokerNotALinkageError() {
        UnsupportedBrokerException e = assertThrows(UnsupportedBrokerException.class,
            () -> Interceptor.bindingFor("4.3.1"));
        assertTrue(e.getMessage().startsWith("kpipe cannot hook Kafka 4.3.1: its binding "
            + "dev.kpipe.interceptor.v4_2.Binding42 is missing from the kpipe jar"), e.getMessage());
    }

    @Test
    void everyHookPointOfThe44BindingExistsInKafka44() {
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), new Binding44().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLinkAgainstKafka44() throws Exception {
        new Binding44().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    @Test
    void missingHookPointsAreNamedOneByOne() {
        ClassLoader loader = getClass().getClassLoader();
        List<HookPoint> points = List.of(
            HookPoint.type("kafka.network.Processor"),
            HookPoint.type("kafka.network.RequestChannel$Request"),
            HookPoint.method("kafka.network.Processor", "close", "java.lang.String"),
            HookPoint.method("kafka.network.Processor", "close", "long"),
            HookPoint.method("org.apache.kafka.network.Request", "responseDequeueTimeNanos", "long"),
            HookPoint.field("kafka.network.Processor", "listenerName"),
            HookPoint.field("kafka.network.Processor", "noSuchField"));
        assertEquals(List.of(
                "kafka.network.RequestChannel$Request",
                "kafka.network.Processor.close(long)",
                "kafka.network.Processor.noSuchField"),
            HookPoint.missing(loader, points));
    }
}
