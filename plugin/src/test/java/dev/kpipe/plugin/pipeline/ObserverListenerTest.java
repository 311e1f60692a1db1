// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static dev.kpipe.plugin.pipeline.FakeBroker.StepType.COMPLETE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.pipeline.FakeBroker.Request;
import dev.kpipe.plugin.pipeline.FakeBroker.Response;
import dev.kpipe.plugin.pipeline.FakeBroker.Step;
import dev.kpipe.plugin.pipeline.Scenario.Kind;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.Test;

/**
 * The SPI's defaults on the {@link FakeBroker}: a plugin that implements one observation method of
 * {@link NetworkEventListener} ({@code onRequestDispatched}) and nothing else is installed instead of kpipe. Every
 * request is admitted {@link Admission#CLASSIC} (the fake fails a run otherwise), no connection is ever the plugin's,
 * the broker reads one request per connection at a time as stock Kafka does, every client gets every response in
 * order and nothing wedges; the observer is told each handled request's dispatch exactly once.
 *
 * <p>Not in arrival order on a classic connection, and that is stock Kafka: the broker reads the next request once the
 * previous response is written, and a response written from inside {@code KafkaApis.handle} (acks=1, acks=0's no-op,
 * METADATA) can be written, and the next request read and handled, before the first handler thread returns. The
 * property found it ({@code [0, 1, 3, 2, 4]}); the example pins the order where responses come from the purgatory.
 */
class ObserverListenerTest {

    private static final int FAIR_STEPS = 200_000;

    /** Implements one method; every other one is the SPI's default. */
    static final class DispatchObserver implements NetworkEventListener<Request, Response> {
        /** Per connection id, the indexes of its requests in the order their dispatch was reported. */
        final Map<String, List<Integer>> dispatched = new LinkedHashMap<>();

        final IdentityHashMap<Request, Boolean> seen = new IdentityHashMap<>();

        @Override
        public void onRequestDispatched(Request request, RequestContext context) {
            if (seen.put(request, Boolean.TRUE) != null) {
                throw new AssertionError("dispatch of " + request + " reported twice");
            }
            dispatched
                    .computeIfAbsent(context.connectionId, k -> new ArrayList<>())
                    .add(request.index);
        }
    }

    @Test
    void anObserverLeavesEveryConnectionClassicAndSeesEachDispatchOnce() {
        DispatchObserver observer = new DispatchObserver();
        Scenario scenario = new Scenario(
                1,
                4,
                16,
                Long.MAX_VALUE,
                false,
                List.of(
                        Scenario.client(
                                Req.of(Kind.PRODUCE_ACKS_ALL).later(),
                                Req.of(Kind.PRODUCE_ACKS_ALL).later(),
                                Req.of(Kind.METADATA),
                                Req.of(Kind.PRODUCE_ACKS_1)),
                        Scenario.client(Req.of(Kind.OFFSET_COMMIT), Req.of(Kind.OFFSET_COMMIT))),
                7);
        Run run = new Run(scenario, observer);

        // With kpipe the three produces would all be read before any is acknowledged; with an observer, stock Kafka:
        // the first is read, the connection stays muted until its response is written.
        run.except(COMPLETE);
        assertEquals(1, run.broker.completions.size(), "one acks=all produce read and waiting for its acks");
        assertTrue(run.conn(0).channel.isMuted(), "muted until its response is written");
        assertEquals(3, run.conn(0).inbound.size(), "the others wait in the socket");
        assertNull(run.kpipe(0), "the connection is the broker's");

        run.settle();
        run.assertReceivedInOrder(0);
        run.assertReceivedInOrder(1);
        assertEquals(List.of(0, 1, 2, 3), observer.dispatched.get(run.conn(0).id));
        assertEquals(List.of(0, 1), observer.dispatched.get(run.conn(1).id));
        for (Request r : run.conn(0).requests) {
            assertEquals(Admission.CLASSIC, r.admission, r + " admitted classically");
        }
        assertEquals(0, run.stats().upgrades());
        assertEquals(0, run.stats().pipelinedRequests());
        run.finish();
    }

    /**
     * Any hostile scenario of the kpipe property tests (throttle windows, re-authentication, acks=0, transactional and
     * exclusive requests, client disconnections), any interleaving: the fake's invariants hold with
     * the observer installed (it checks every admission is CLASSIC), everyone is answered in order, and the observer
     * is told the dispatch of exactly the requests the broker queued for its handlers, once each. Fixed seed.
     */
    @Property(seed = "2301", tries = 200, edgeCases = EdgeCasesMode.NONE)
    void anyInterleavingWithAnObserverIsStockKafka(
            @ForAll("scenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        DispatchObserver observer = new DispatchObserver();
        FakeBroker broker = new FakeBroker(scenario, observer);
        for (int choice : choices) {
            List<Step> steps = broker.enabled(true);
            if (steps.isEmpty()) {
                break;
            }
            broker.apply(steps.get(choice % steps.size()));
        }
        broker.runFair(FAIR_STEPS);
        broker.checkAllAnswered();
        for (FakeBroker.Conn c : broker.conns) {
            assertNull(broker.owned(c.index), "connection " + c.index + " is the broker's");
        }
        broker.finishAndCheckGaugesZero(FAIR_STEPS);
        for (FakeBroker.Conn c : broker.conns) {
            List<Integer> queued = c.requests.stream()
                    .filter(r -> r.queued)
                    .map(r -> r.index)
                    .sorted()
                    .toList();
            List<Integer> dispatched = observer.dispatched.getOrDefault(c.id, List.of()).stream()
                    .sorted()
                    .toList();
            assertEquals(queued, dispatched, "connection " + c.index + ": one dispatch per request handled");
        }
        assertEquals(0, broker.stats.upgrades());
        assertEquals(0, broker.stats.pipelinedRequests());
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        return new PipelinePropertiesTest().hostileScenarios();
    }

    @Provide
    Arbitrary<List<Integer>> choices() {
        return new PipelinePropertiesTest().choices();
    }
}
