package dev.kpipe.interceptor.v4_2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.v4_4.Binding44;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The 4.2/4.3 binding against the Kafka 4.2.1 jars this module compiles and tests with. */
class Binding42Test {

    @ParameterizedTest
    @ValueSource(strings = {"4.2.0", "4.2.1", "4.3.0", "4.3.1"})
    void kafka42And43GetThisBinding(String version) throws Exception {
        Interceptor.Binding b = Interceptor.bindingFor(version);
        assertInstanceOf(Binding42.class, b);
        assertEquals("4.2-4.3", b.versionLine());
    }

    @Test
    void everyHookPointExistsInKafka42() {
        assertEquals(List.of(), HookPoint.missing(getClass().getClassLoader(), new Binding42().hookPoints()));
    }

    @Test
    void theBindingsAccessorsOfBrokerInternalsLinkAgainstKafka42() throws Exception {
        new Binding42().link(); // throws UnsupportedBrokerException if a private member's type differs
    }

    /** The 4.4 binding on a 4.2 broker would be refused before anything is installed. */
    @Test
    void the44BindingsHookPointsAreMissingInKafka42() {
        List<String> missing = HookPoint.missing(getClass().getClassLoader(), new Binding44().hookPoints());
        assertTrue(missing.contains("kafka.network.RequestChannel.sendRequest(org.apache.kafka.network.Request)"),
            missing::toString);
        assertTrue(missing.contains("org.apache.kafka.network.Response.request()"), missing::toString);
    }
}
