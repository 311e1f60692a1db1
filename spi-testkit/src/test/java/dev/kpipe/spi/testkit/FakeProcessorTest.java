// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.Test;

/** Each plugin-side check of the fake processor: it fires on a listener that breaks the rule, not on one that keeps it. */
class FakeProcessorTest {

    private final List<String> told = new ArrayList<>();
    private final List<FakeProcessor> processors = new ArrayList<>();

    @Test
    void aPipeliningListenerThatKeepsTheContractPassesEveryCheck() throws Exception {
        InOrderListener listener = new InOrderListener();
        FakeProcessor p = new FakeProcessor(listener, told::add);
        FakeRequest a = p.read("c1", ApiKeys.PRODUCE);
        assertEquals(Admission.PIPELINED, p.admission(a));
        p.dispatch(a);
        assertEquals(1, p.wakeups(), "the dispatch is handed to the network thread with a wake-up");
        assertThrows(IllegalStateException.class, () -> p.read("c1", ApiKeys.PRODUCE), "muted until then");
        p.round();
        assertFalse(p.isMuted("c1"), "unmuted on the processor's thread once dispatched");
        FakeRequest b = p.read("c1", ApiKeys.PRODUCE);
        p.dispatch(b);
        p.respond(b); // b's response first: the listener holds it until a's is written
        p.round();
        assertEquals(List.of(), p.written());
        FakeResponse ra = p.respond(a);
        p.round();
        assertEquals(
                List.of(ra.request(), b),
                p.written().stream().map(FakeResponse::request).toList());

        FakeRequest held = p.read("c2", ApiKeys.METADATA); // the listener holds METADATA and releases it next round
        assertEquals(Admission.HELD, p.admission(held));
        p.round();
        p.dispatch(held);
        p.round();
        FakeRequest c = p.read("c2", ApiKeys.PRODUCE);
        p.respond(c);
        p.round(); // the response of c waits for held's
        p.closeConnection("c2"); // ... whose connection closes: c's response is discarded
        p.verify();
        assertEquals(List.of(), told);
    }

    @Test
    void aResponseReleasedTwiceIsReported() {
        List<FakeResponse> kept = new ArrayList<>();
        int[] returns = {0};
        FakeProcessor p = new FakeProcessor(
                new PipelineEverything() {
                    @Override
                    public FakeResponse onResponseReady(
                            NetworkProcessor<FakeRequest, FakeResponse> processor, FakeResponse response) {
                        if (response != null) {
                            kept.add(response);
                            return null;
                        }
                        // the bug: a response handed on is not forgotten, so it is handed on again
                        return !kept.isEmpty() && returns[0]++ < 2 ? kept.get(0) : null;
                    }
                },
                told::add);
        p.respond(p.read("c1", ApiKeys.PRODUCE));
        p.round(); // kept back
        p.round(); // released, then released again
        assertEquals(1, p.written().size(), "written once");
        assertEquals(1, p.violations().size(), p.violations().toString());
        assertTrue(p.violations()
                .get(0)
                .endsWith("returned from onResponseReady but not held: written or discarded already"));
        assertEquals(p.violations(), told);
    }

    @Test
    void aHeldResponseNeverReleasedNorDiscardedIsReportedAtTheEnd() {
        FakeProcessor p = new FakeProcessor(new PipelineEverything() {
            @Override
            public FakeResponse onResponseReady(
                    NetworkProcessor<FakeRequest, FakeResponse> processor, FakeResponse response) {
                return null; // takes every response and keeps it
            }
        });
        p.respond(p.read("c1", ApiKeys.PRODUCE));
        p.round();
        p.closeConnection("c1");
        assertEquals(List.of(), p.violations(), "not yet: it may still discard it");
        AssertionError e = assertThrows(AssertionError.class, p::verify);
        assertTrue(e.getMessage().contains("held and never released"), e.getMessage());
    }

    @Test
    void aDiscardOfAResponseAlreadyWrittenOrOfAnOpenConnectionIsReported() {
        FakeProcessor p = new FakeProcessor(new PipelineEverything());
        FakeResponse r = p.respond(p.read("c1", ApiKeys.PRODUCE));
        p.round(); // handed on at once: written
        p.discard(r);
        assertTrue(p.violations().get(0).contains("discarded but not held: written or discarded already"));

        FakeProcessor q = new FakeProcessor(new PipelineEverything());
        FakeResponse taken = q.respond(q.read("c1", ApiKeys.PRODUCE));
        assertEquals(taken, q.pollResponse());
        q.discard(taken);
        q.discard(taken);
        assertEquals(2, q.violations().size(), q.violations().toString());
        assertTrue(q.violations().get(0).endsWith("discarded while its connection is open"));
        assertTrue(q.violations().get(1).contains("written or discarded already"));
    }

    @Test
    void handBackWithARequestIsOnlyForAHeldRequest() {
        FakeProcessor broken = new FakeProcessor(new PipelineEverything());
        FakeRequest pipelined = broken.read("c1", ApiKeys.PRODUCE);
        broken.handBack("c1", pipelined);
        assertTrue(broken.violations()
                .get(0)
                .startsWith("handBack of PRODUCE request #1 of connection c1, which the" + " listener does not hold"));

        FakeProcessor correct = new FakeProcessor(new PipelineEverything() {
            @Override
            public Admission onRequestRead(
                    NetworkProcessor<FakeRequest, FakeResponse> p,
                    FakeRequest q,
                    RequestContext c,
                    AbstractRequest b,
                    int size) {
                return Admission.HELD;
            }
        });
        FakeRequest held = correct.read("c1", ApiKeys.JOIN_GROUP);
        correct.handBack("c1", held);
        assertTrue(correct.isMuted("c1"), "left as the broker leaves a connection after reading that request");
        correct.handBack("c1", held);
        assertEquals(1, correct.violations().size(), "a second hand-back of it: " + correct.violations());
    }

    @Test
    void anActionOffTheProcessorsThreadIsReportedAndNotPerformed() throws Exception {
        FakeProcessor p = new FakeProcessor(
                new PipelineEverything() {
                    @Override
                    public void onRequestDispatched(FakeRequest request, RequestContext context) {
                        processors.get(0).unmute(context.connectionId); // on the request handler thread
                    }
                },
                told::add);
        processors.add(p);
        p.dispatch(p.read("c1", ApiKeys.PRODUCE));
        assertTrue(p.isMuted("c1"), "not performed");
        assertEquals(
                List.of("unmute called on thread 'fake-request-handler', not the processor's thread '"
                        + Thread.currentThread().getName() + "'"),
                told);
    }

    @Test
    void aThrowingEventIsReportedAndTheBrokerGoesOnWithItsDefault() {
        FakeProcessor p = new FakeProcessor(new NetworkEventListener<>() {
            @Override
            public Admission onRequestRead(
                    NetworkProcessor<FakeRequest, FakeResponse> processor,
                    FakeRequest q,
                    RequestContext c,
                    AbstractRequest b,
                    int size) {
                throw new IllegalStateException("plugin bug");
            }
        });
        FakeRequest q = p.read("c1", ApiKeys.PRODUCE);
        assertEquals(Admission.CLASSIC, p.admission(q));
        assertEquals(List.of("onRequestRead threw java.lang.IllegalStateException: plugin bug"), p.violations());
    }

    @Test
    void theTestDrivesTheFakeFromItsOwnThread() throws Exception {
        FakeProcessor p = new FakeProcessor(new PipelineEverything());
        Throwable[] thrown = new Throwable[1];
        Thread other = new Thread(() -> {
            try {
                p.read("c1", ApiKeys.PRODUCE);
            } catch (IllegalStateException e) {
                thrown[0] = e;
            }
        });
        other.start();
        other.join();
        assertTrue(thrown[0] instanceof IllegalStateException, String.valueOf(thrown[0]));
    }

    @Test
    void anObserversAnswersAreIgnoredAndItsActionsAreViolations() {
        NetworkEventListener<FakeRequest, FakeResponse> meddling = new NetworkEventListener<>() {
            @Override
            public Admission onRequestRead(
                    NetworkProcessor<FakeRequest, FakeResponse> p,
                    FakeRequest q,
                    RequestContext c,
                    AbstractRequest b,
                    int size) {
                p.isOpen(q.connectionId()); // a read: allowed
                return Admission.HELD;
            }

            @Override
            public FakeResponse onResponseReady(NetworkProcessor<FakeRequest, FakeResponse> p, FakeResponse r) {
                return null; // would hold every response
            }

            @Override
            public boolean onUnmute(NetworkProcessor<FakeRequest, FakeResponse> p, String id) {
                p.mute(id); // an action: not an observer's
                return true;
            }
        };
        FakeProcessor p = FakeProcessor.observing(meddling);
        FakeRequest a = p.read("c1", ApiKeys.PRODUCE);
        assertEquals(Admission.CLASSIC, p.admission(a), "the broker follows the deciding listener, not the observer");
        FakeResponse r = p.respond(a);
        p.round();
        assertEquals(List.of(r), p.written(), "handled as taken");
        assertFalse(p.isMuted("c1"), "not taken over, and the mute not performed");
        assertEquals(List.of("an observer called mute: it owns no connection"), p.violations());
        assertThrows(AssertionError.class, p::verify);
    }
}
