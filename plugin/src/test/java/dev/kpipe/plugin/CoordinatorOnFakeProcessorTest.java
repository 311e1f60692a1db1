// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pipeline.WakeupTimer;
import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.testkit.FakeProcessor;
import dev.kpipe.spi.testkit.FakeRequest;
import dev.kpipe.spi.testkit.FakeResponse;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/**
 * kpipe's coordinator on the SPI test kit's fake processor: a pipelined producer's connection, its responses completed
 * out of order, then closed with a response held; the kit's plugin-side checks (held responses let go exactly once,
 * hand-backs, actions on the processor's thread only) find nothing; and the wake-ups a dispatch asks of the processor.
 */
class CoordinatorOnFakeProcessorTest {

    private final PipelineStats stats = new PipelineStats();
    private final PipelineCoordinator<FakeRequest, FakeResponse> coordinator = new PipelineCoordinator<>(
            new RequestClassifier(KafkaRequests.policy()),
            new InflightLimits(5, 1 << 20),
            ByteBudget.unbounded(Ticker.SYSTEM),
            stats,
            Ticker.SYSTEM,
            WakeupTimer.daemon());
    private final FakeProcessor processor = new FakeProcessor(coordinator);

    @Test
    void aPipelinedProducerKeepsThePluginSideOfTheContract() throws Exception {
        coordinator.onInstalled(new BrokerCapabilities("4.4.0", Set.of()));
        FakeRequest a = produce("c1", 1);
        assertEquals(Admission.PIPELINED, processor.admission(a));
        processor.dispatch(a);
        processor.round();
        assertFalse(processor.isMuted("c1"), "reads its next request once the first is dispatched");
        FakeRequest b = produce("c1", 2);
        processor.dispatch(b);
        processor.round();
        processor.respond(b); // completed first: held until a's is written
        processor.round();
        assertEquals(List.of(), processor.written());
        processor.respond(a);
        processor.round();
        assertEquals(
                List.of(a, b),
                processor.written().stream().map(FakeResponse::request).toList());

        FakeRequest c = produce("c1", 3);
        processor.dispatch(c);
        processor.round();
        FakeRequest d = produce("c1", 4);
        processor.respond(d); // held behind c's ...
        processor.round();
        processor.closeConnection("c1"); // ... and discarded when the connection closes
        processor.respond(c); // completed after the close: handed on, as the broker completes it
        processor.round();
        assertEquals(
                List.of(a, b, c),
                processor.written().stream().map(FakeResponse::request).toList());
        assertEquals(List.of(), processor.violations());
        processor.verify();
    }

    /**
     * A dispatch wakes the processor only when no round is due: not when a response is already queued (acks=1: the
     * broker answered inside {@code KafkaApis.handle}, and woke the processor for the response), whose round's end
     * unmutes the connection.
     */
    @Test
    void aDispatchWakesTheProcessorOnlyWhenNoResponseIsQueued() throws Exception {
        coordinator.onInstalled(new BrokerCapabilities("4.4.0", Set.of()));
        FakeRequest a = produce("c1", 1);
        FakeRequest b = produce("c2", 1);
        processor.dispatch(a);
        assertEquals(1, processor.wakeups(), "a dispatch with nothing queued wakes the processor");
        processor.dispatch(b);
        assertEquals(2, processor.wakeups(), "so does the next (Selector.wakeup coalesces them until its poll)");
        processor.round();
        assertFalse(processor.isMuted("c1"));
        assertFalse(processor.isMuted("c2"));
        processor.respond(a);
        processor.respond(b);
        processor.round();

        FakeRequest c = produce("c1", 2);
        processor.respond(c); // answered inside handle, as acks=1 is: the response is queued before handle returns
        processor.dispatch(c);
        assertEquals(2, processor.wakeups(), "a dispatch whose response is queued does not wake");
        processor.round();
        assertFalse(processor.isMuted("c1"), "unmuted at the end of the round that wrote the response");

        FakeRequest d = produce("c1", 3);
        processor.dispatch(d);
        assertEquals(3, processor.wakeups(), "a dispatch with nothing queued wakes it again");
        processor.round();
        assertFalse(processor.isMuted("c1"));
        assertEquals(3, stats.processorWakeups(), "processor-wakeup-total counts the wake-ups kpipe asked for");
        assertEquals(
                List.of(a, b, c),
                processor.written().stream().map(FakeResponse::request).toList());
        processor.respond(d);
        processor.round();
        processor.verify();
    }

    private FakeRequest produce(String connectionId, int correlationId) {
        KafkaRequests.Parsed p =
                KafkaRequests.produce(connectionId, correlationId, (short) 1, null, false, KafkaRequests.INCLUDED);
        return processor.read(connectionId, ApiKeys.PRODUCE, p.body(), p.sizeInBytes());
    }
}
