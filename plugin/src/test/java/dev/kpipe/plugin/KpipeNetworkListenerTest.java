// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.testkit.FakeProcessor;
import dev.kpipe.spi.testkit.FakeRequest;
import dev.kpipe.spi.testkit.FakeResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/**
 * kpipe on a broker that calls the SPI itself (the reference patch's {@code network.event.listener.class}): the
 * listener runs the broker's kpipe with no advice, passes the events of {@code kpipe.listeners}' processors only, and a
 * {@link KpipePlugin} in {@code metric.reporters} of such a broker stays out. The broker is the kit's fake processor
 * (listener {@code PLAINTEXT}).
 */
class KpipeNetworkListenerTest {

    @Test
    void pipelinesOnAProcessorOfItsListenersWithNoAdvice() throws Exception {
        Interceptor.Installation before = Interceptor.installation();
        int generation = Interceptor.brokersGeneration(); // moves whenever a broker's advice hooks are registered
        try (KpipeNetworkListener listener = new KpipeNetworkListener()) {
            listener.configure(broker("41", "PLAINTEXT"));
            FakeProcessor processor = new FakeProcessor(fake(listener));
            listener.onInstalled(new BrokerCapabilities("4.3.1", Set.of()));
            FakeRequest a = produce(processor, 1);
            assertEquals(Admission.PIPELINED, processor.admission(a));
            processor.dispatch(a);
            processor.round();
            assertFalse(processor.isMuted("c1"), "its next request is read once the first is dispatched");
            FakeRequest b = produce(processor, 2);
            processor.dispatch(b);
            processor.respond(b);
            processor.respond(a);
            processor.round();
            assertEquals(
                    List.of(a, b),
                    processor.written().stream().map(FakeResponse::request).toList());
            assertEquals(List.of(), processor.violations());
            processor.verify();
            assertEquals(before, Interceptor.installation(), "no advice installed");
            assertEquals(generation, Interceptor.brokersGeneration(), "no broker hooks registered with the advice");
            assertTrue(listener.plugin().kpipeMetrics().isPresent());
        }
    }

    @Test
    void leavesTheProcessorsOfOtherListenersToTheBroker() throws Exception {
        try (KpipeNetworkListener listener = new KpipeNetworkListener()) {
            listener.configure(broker("42", "INTERNAL"));
            FakeProcessor processor = new FakeProcessor(fake(listener));
            listener.onInstalled(new BrokerCapabilities("4.3.1", Set.of()));
            FakeRequest a = produce(processor, 1);
            assertEquals(Admission.CLASSIC, processor.admission(a));
            processor.dispatch(a);
            processor.respond(a);
            processor.round();
            assertEquals(
                    List.of(a),
                    processor.written().stream().map(FakeResponse::request).toList());
            assertEquals(List.of(), processor.violations());
        }
    }

    @Test
    void aReporterOfABrokerThatNamesTheListenerStaysOut() {
        KpipePlugin reporter = new KpipePlugin();
        Map<String, Object> config = broker("43", "PLAINTEXT");
        config.put(KpipeNetworkListener.BROKER_SETTING, KpipeNetworkListener.class.getName());
        assertEquals(KpipeNetworkListener.class.getName(), KpipePlugin.NETWORK_LISTENER_CLASS);
        reporter.configure(config);
        try {
            assertTrue(reporter.kpipeMetrics().isEmpty());
            assertNull(reporter.brokerHooks());
        } finally {
            reporter.close();
        }
    }

    private static Map<String, Object> broker(String nodeId, String kpipeListeners) {
        Map<String, Object> m = new HashMap<>();
        m.put("node.id", nodeId);
        m.put("process.roles", "broker");
        m.put("listeners", "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093");
        m.put("log.dirs", "/tmp/kafka");
        m.put(KpipeConfig.LISTENERS, kpipeListeners);
        m.put(KpipeConfig.ENABLE, "true");
        return m;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static NetworkEventListener<FakeRequest, FakeResponse> fake(KpipeNetworkListener listener) {
        return (NetworkEventListener) listener;
    }

    private static FakeRequest produce(FakeProcessor processor, int correlationId) {
        KafkaRequests.Parsed p =
                KafkaRequests.produce("c1", correlationId, (short) 1, null, false, KafkaRequests.INCLUDED);
        return processor.read("c1", ApiKeys.PRODUCE, p.body(), p.sizeInBytes());
    }
}
