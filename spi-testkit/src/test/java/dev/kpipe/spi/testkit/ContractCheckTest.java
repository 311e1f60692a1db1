// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.NetworkEventListener;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;

/** What the SPI's test kit accepts as the contract and what it reports, event by event. */
class ContractCheckTest {

    private final List<String> violations = new ArrayList<>();
    private final List<String> delegated = new ArrayList<>();
    private final NetworkEventListener<Object, Object> plugin = new NetworkEventListener<>() {
        @Override
        public void onRequestDispatched(Object request, RequestContext context) {
            delegated.add("dispatched " + request);
        }

        @Override
        public Admission onRequestRead(
                dev.kpipe.spi.NetworkProcessor<Object, Object> p,
                Object request,
                RequestContext context,
                org.apache.kafka.common.requests.AbstractRequest body,
                int size) {
            delegated.add("read " + request);
            return Admission.PIPELINED;
        }
    };
    private final ContractCheck<Object, Object> check = new ContractCheck<>(plugin, violations::add);

    @Test
    void configureAndCloseReachThePluginsListener() {
        List<String> calls = new ArrayList<>();
        NetworkEventListener<String, String> plugin = new NetworkEventListener<>() {
            @Override
            public void configure(java.util.Map<String, ?> configs) {
                calls.add("configure " + configs.get("node.id"));
            }

            @Override
            public void close() {
                calls.add("close");
            }
        };
        List<String> violations = new ArrayList<>();
        ContractCheck<String, String> check = new ContractCheck<>(plugin, violations::add);
        check.configure(java.util.Map.of("node.id", "1"));
        check.close();
        assertEquals(List.of("configure 1", "close"), calls);
        assertEquals(List.of(), violations);
    }

    @Test
    void aBrokerThatKeepsTheContractIsPassedThroughUnchanged() {
        check.onInstalled(new BrokerCapabilities("test", EnumSet.of(ApiKeys.PRODUCE)));
        String a = "a";
        String b = "b";
        assertSame(Admission.PIPELINED, check.onRequestRead(null, a, context(ApiKeys.PRODUCE, "c1"), null, 10));
        check.onRequestRead(null, b, context(ApiKeys.PRODUCE, "c1"), null, 10);
        check.onDispatchDeferred(a, context(ApiKeys.PRODUCE, "c1"));
        check.onRequestDispatched(b, context(ApiKeys.PRODUCE, "c1"));
        check.onRequestDispatched(a, context(ApiKeys.PRODUCE, "c1"));
        check.onConnectionClosed(null, "c1");
        check.onRequestDispatched("never read here", context(ApiKeys.METADATA, "other"));
        assertEquals(List.of(), violations);
        assertEquals(0, check.violations());
        assertEquals(
                List.of("read a", "read b", "dispatched b", "dispatched a", "dispatched never read here"), delegated);
    }

    @Test
    void eachBrokenRuleIsReportedOnceWithoutDisturbingThePlugin() {
        check.onProcessorRound(null);
        check.onInstalled(new BrokerCapabilities("test", Set.of()));
        check.onInstalled(new BrokerCapabilities("test", Set.of()));
        String a = "a";
        check.onRequestRead(null, a, context(ApiKeys.PRODUCE, "c1"), null, 10);
        check.onRequestRead(null, a, context(ApiKeys.PRODUCE, "c1"), null, 10);
        check.onDispatchDeferred(a, context(ApiKeys.PRODUCE, "c1"));
        check.onRequestDispatched(a, context(ApiKeys.PRODUCE, "c1"));
        check.onRequestDispatched(a, context(ApiKeys.PRODUCE, "c1"));
        check.onConnectionClosed(null, "c1");
        check.onConnectionClosed(null, "c1");
        check.onRequestRead(null, "late", context(ApiKeys.PRODUCE, "c1"), null, 10);
        assertEquals(7, violations.size(), String.join("\n", violations));
        assertTrue(violations.get(0).contains("onProcessorRound before onInstalled"), violations.get(0));
        assertTrue(violations.get(1).contains("onInstalled came twice"), violations.get(1));
        assertTrue(violations.get(2).contains("the same request read twice"), violations.get(2));
        assertTrue(violations.get(3).contains("not an API the broker declared"), violations.get(3));
        assertTrue(violations.get(4).contains("dispatched twice"), violations.get(4));
        assertTrue(violations.get(5).contains("onConnectionClosed of connection c1 came twice"), violations.get(5));
        assertTrue(violations.get(6).contains("after it closed"), violations.get(6));
        assertEquals(7, check.violations());
        assertEquals(3, delegated.stream().filter(d -> d.startsWith("read")).count(), "every event still delegated");
    }

    @Test
    void aDeferralAfterTheDispatchIsReported() {
        check.onInstalled(new BrokerCapabilities("test", EnumSet.of(ApiKeys.PRODUCE)));
        check.onRequestRead(null, "a", context(ApiKeys.PRODUCE, "c1"), null, 10);
        check.onRequestDispatched("a", context(ApiKeys.PRODUCE, "c1"));
        check.onDispatchDeferred("a", context(ApiKeys.PRODUCE, "c1"));
        check.onRequestRead(null, "b", context(ApiKeys.PRODUCE, "c1"), null, 10);
        check.onDispatchDeferred("b", context(ApiKeys.PRODUCE, "c1"));
        check.onDispatchDeferred("b", context(ApiKeys.PRODUCE, "c1"));
        assertEquals(2, violations.size(), violations.toString());
        assertTrue(violations.get(1).endsWith("after an earlier onDispatchDeferred"), violations.get(1));
        assertTrue(violations.get(0).endsWith("after its dispatch"), violations.get(0));
    }

    @Test
    void aThrowingSinkNeverReachesTheBrokerThread() {
        ContractCheck<Object, Object> throwing = new ContractCheck<>(plugin, v -> {
            throw new IllegalStateException("sink");
        });
        throwing.onProcessorRound(null);
        assertEquals(1, throwing.violations());
    }

    /** A new event of the SPI that the kit did not pass on would silently take the default for every plugin. */
    @Test
    void everyEventOfTheSpiIsPassedOnNotLeftToItsDefault() throws Exception {
        for (java.lang.reflect.Method m : NetworkEventListener.class.getMethods()) {
            assertEquals(
                    ContractCheck.class,
                    ContractCheck.class
                            .getMethod(m.getName(), m.getParameterTypes())
                            .getDeclaringClass(),
                    m.getName() + " is passed on by the test kit");
        }
    }

    private static RequestContext context(ApiKeys api, String connectionId) {
        return new RequestContext(
                new RequestHeader(api, api.latestVersion(), "client", 1),
                connectionId,
                InetAddress.getLoopbackAddress(),
                Optional.empty(),
                KafkaPrincipal.ANONYMOUS,
                ListenerName.normalised("PLAINTEXT"),
                SecurityProtocol.PLAINTEXT,
                ClientInformation.EMPTY,
                false);
    }
}
