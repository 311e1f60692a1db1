// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import dev.kpipe.spi.ResponseKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * A fake network processor that drives a {@link NetworkEventListener} without a broker, and checks the plugin side of
 * the SPI's contract. The test plays the broker: it {@link #read reads} a request, {@link #dispatch dispatches} it (on
 * a request handler thread of the fake's), {@link #respond responds} to it and runs a {@link #round} (the listener's
 * round, then the response queue as the broker's processor empties it: each response the listener hands on is written
 * at once); {@link #closeConnection} closes a connection. Checked, each violation collected ({@link #violations()})
 * and told to the sink given at construction:
 *
 * <ul>
 *   <li>each response the listener holds (kept back from {@code onResponseReady}, or taken with {@code pollResponse})
 *       is released (returned from {@code onResponseReady}) or {@linkplain #discard discarded} exactly once, and
 *       discarded only once its connection closed;
 *   <li>{@code release} and {@code handBack} with a request only for a request the listener holds ({@link
 *       Admission#HELD}), once, and {@code handBack} only while it holds no response of that connection;
 *   <li>actions only on the processor's thread (the thread that made the fake); {@link #wakeup}, {@link #listenerName},
 *       {@link #id} and the accessors on any thread;
 *   <li>no event throws.
 * </ul>
 *
 * Made with {@link #observing}, the fake plays a broker that carries the listener as an observer beside another: its
 * answers are ignored (a request stays {@code CLASSIC}, each response is handled as taken, no connection is taken
 * over), and every action but {@code isOpen}, {@code wakeup} and the accessors is a violation.
 * {@link #verify} adds what is still held at the end and throws if anything was found. An action called on another
 * thread is reported and not performed. Not modelled: throttles, re-authentication, input ending, deferred dispatch.
 *
 * <p>Thread: the test drives it from the thread that made it, the processor's thread ({@link IllegalStateException}
 * otherwise: a fault of the test, not of the listener); {@link #respond} from any thread.
 */
public final class FakeProcessor implements NetworkProcessor<FakeRequest, FakeResponse> {

    /** Responses handled in one {@link #round} at most: a listener that never returns {@code null} is stopped there. */
    public static final int MAX_RESPONSES_PER_ROUND = 10_000;

    /** What the fake knows of one open connection. */
    private static final class Connection {
        boolean muted;
        /** Whether the listener owns its mute state. */
        boolean owned;
    }

    private final NetworkEventListener<FakeRequest, FakeResponse> listener;
    private final boolean observer;
    private final Thread thread = Thread.currentThread();
    private final Custody custody;
    private final Map<String, Connection> open = new HashMap<>();
    private final Map<FakeRequest, Admission> admissions = new IdentityHashMap<>();
    private final Queue<FakeResponse> responses = new ConcurrentLinkedQueue<>();
    private final List<FakeResponse> written = new ArrayList<>();
    private final AtomicInteger wakeups = new AtomicInteger();
    private int requests;

    /**
     * @param listener the listener under test
     * @param violations told of each violation as it is found, on the thread that found it; must not block
     */
    public FakeProcessor(NetworkEventListener<FakeRequest, FakeResponse> listener, Consumer<String> violations) {
        this(listener, violations, false);
    }

    private FakeProcessor(
            NetworkEventListener<FakeRequest, FakeResponse> listener, Consumer<String> violations, boolean observer) {
        this.listener = listener;
        this.custody = new Custody(thread, violations);
        this.observer = observer;
    }

    /**
     * @param listener the listener under test, carried as an observer: its answers ignored, its actions violations
     * @return the fake; violations are only collected
     */
    public static FakeProcessor observing(NetworkEventListener<FakeRequest, FakeResponse> listener) {
        return new FakeProcessor(listener, v -> {}, true);
    }

    /** @param listener the listener under test; violations are only collected */
    public FakeProcessor(NetworkEventListener<FakeRequest, FakeResponse> listener) {
        this(listener, v -> {});
    }

    // ---- the broker's side, driven by the test

    /** {@link #read(String, ApiKeys, AbstractRequest, int)} without a body, 100 bytes. */
    public FakeRequest read(String connectionId, ApiKeys api) {
        return read(connectionId, api, null, 100);
    }

    /**
     * Reads a request on a connection (opened by its first read) and reports it ({@code onRequestRead}); the read
     * mutes the connection, as the broker's does. A {@code CLASSIC} answer leaves the connection to the broker.
     *
     * @return the request
     * @throws IllegalStateException if the connection is muted (the test's fault: the broker would not read it)
     */
    public FakeRequest read(String connectionId, ApiKeys api, AbstractRequest body, int sizeInBytes) {
        requireProcessorThread("read");
        Connection c = open.computeIfAbsent(connectionId, id -> new Connection());
        if (c.muted) {
            throw new IllegalStateException(
                    "connection " + connectionId + " is muted: the broker reads nothing from it");
        }
        int number = ++requests;
        FakeRequest q = FakeRequest.of(listenerName(), connectionId, api, body, sizeInBytes, number);
        c.muted = true;
        Admission a = event(
                "onRequestRead",
                () -> listener.onRequestRead(this, q, q.context(), body, sizeInBytes),
                Admission.CLASSIC);
        if (observer) {
            a = Admission.CLASSIC;
        } else if (a == null) {
            custody.violation("onRequestRead of " + q + " answered null");
            a = Admission.CLASSIC;
        }
        admissions.put(q, a);
        c.owned = a != Admission.CLASSIC;
        if (a == Admission.HELD) {
            custody.requestHeld(q);
        }
        return q;
    }

    /** @return the listener's answer to the request's {@code onRequestRead} */
    public Admission admission(FakeRequest request) {
        return admissions.get(request);
    }

    /** Reports the request dispatched ({@code onRequestDispatched}) on a request handler thread, and waits for it. */
    public void dispatch(FakeRequest request) throws InterruptedException {
        requireProcessorThread("dispatch");
        Thread handler = new Thread(
                () -> tell("onRequestDispatched", () -> listener.onRequestDispatched(request, request.context())),
                "fake-request-handler");
        handler.start();
        handler.join();
    }

    /** Queues a response of kind {@code SEND}. Thread: any. */
    public FakeResponse respond(FakeRequest request) {
        return respond(request, ResponseKind.SEND);
    }

    /** Queues a response on the response queue, as a request handler completes one. Thread: any. */
    public FakeResponse respond(FakeRequest request, ResponseKind kind) {
        FakeResponse r = new FakeResponse(request, kind);
        responses.add(r);
        return r;
    }

    /**
     * A round of the processor, as Kafka's {@code Processor.processNewResponses}: {@code onProcessorRound}, then the
     * response queue as the broker empties it: takes the next response (or none), asks the listener which to handle
     * ({@code onResponseReady}) until it answers {@code null}, and writes each at once ({@code onResponseWritten}, then
     * on a connection the broker owns {@code onUnmute}: false unmutes it, true gives it to the listener); then {@code
     * onProcessorRound} again.
     */
    public void round() {
        requireProcessorThread("round");
        tell("onProcessorRound", () -> listener.onProcessorRound(this));
        takeResponses();
        tell("onProcessorRound", () -> listener.onProcessorRound(this));
    }

    private void takeResponses() {
        for (int i = 0; i < MAX_RESPONSES_PER_ROUND; i++) {
            FakeResponse taken = responses.poll();
            FakeResponse answer = event("onResponseReady", () -> listener.onResponseReady(this, taken), taken);
            FakeResponse r = observer ? taken : answer;
            if (taken != null && r != taken) {
                custody.responseTaken(taken);
            }
            if (r == null) {
                return;
            }
            if (r == taken || custody.responseLetGo(r, "returned from onResponseReady")) {
                write(r);
            }
        }
        custody.violation("onResponseReady did not answer null after " + MAX_RESPONSES_PER_ROUND + " responses");
    }

    private void write(FakeResponse r) {
        written.add(r);
        custody.responseWritten(r);
        tell("onResponseWritten", () -> listener.onResponseWritten(this, r));
        String id = r.request().connectionId();
        Connection c = open.get(id);
        if (c != null && !c.owned && !r.kind().isControl()) {
            c.owned = event("onUnmute", () -> listener.onUnmute(this, id), false) && !observer;
            c.muted = c.owned;
        }
    }

    /** The connection closes (either side): {@code onConnectionClosed}. No-op if it is not open. */
    public void closeConnection(String connectionId) {
        requireProcessorThread("closeConnection");
        if (open.remove(connectionId) != null) {
            tell("onConnectionClosed", () -> listener.onConnectionClosed(this, connectionId));
        }
    }

    // ---- what the test reads

    /** @return the violations found so far, in order */
    public List<String> violations() {
        return custody.violations();
    }

    /**
     * Reports what the listener still holds (every held response and request must have been let go by the end), then
     * fails if any violation was found. Call once, at the end of a test.
     *
     * @throws AssertionError listing the violations
     */
    public void verify() {
        requireProcessorThread("verify");
        custody.checkNothingHeld();
        List<String> found = custody.violations();
        if (!found.isEmpty()) {
            throw new AssertionError("the listener broke the SPI's contract:\n" + String.join("\n", found));
        }
    }

    /** @return whether the connection is open and muted */
    public boolean isMuted(String connectionId) {
        Connection c = open.get(connectionId);
        return c != null && c.muted;
    }

    /** @return the responses written, in order */
    public List<FakeResponse> written() {
        return List.copyOf(written);
    }

    /** @return how often {@link #wakeup} was called */
    public int wakeups() {
        return wakeups.get();
    }

    // ---- the SPI's actions

    @Override
    public String listenerName() {
        return "PLAINTEXT";
    }

    @Override
    public int id() {
        return 0;
    }

    @Override
    public void mute(String connectionId) {
        if (act("mute") && open.containsKey(connectionId)) {
            open.get(connectionId).muted = true;
        }
    }

    @Override
    public void unmute(String connectionId) {
        if (act("unmute") && open.containsKey(connectionId)) {
            open.get(connectionId).muted = false;
        }
    }

    @Override
    public boolean isOpen(String connectionId) {
        return act("isOpen") && open.containsKey(connectionId);
    }

    @Override
    public void release(FakeRequest request) {
        if (act("release")) {
            custody.requestLetGo(request, "release");
        }
    }

    @Override
    public void handBack(String connectionId, FakeRequest heldRequest) {
        if (!act("handBack")) {
            return;
        }
        custody.handBack(connectionId, heldRequest);
        Connection c = open.get(connectionId);
        if (c != null) {
            c.owned = false;
            c.muted = heldRequest != null;
        }
    }

    @Override
    public void beginReauthentication(String connectionId, Reauthentication reauthentication) {
        act("beginReauthentication");
    }

    @Override
    public void close(String connectionId) {
        if (act("close")) {
            closeConnection(connectionId);
        }
    }

    @Override
    public FakeResponse pollResponse() {
        if (!act("pollResponse")) {
            return null;
        }
        FakeResponse r = responses.poll();
        if (r != null) {
            custody.responseTaken(r);
        }
        return r;
    }

    @Override
    public void discard(FakeResponse response) {
        if (act("discard") && custody.responseLetGo(response, "discarded")) {
            if (open.containsKey(response.request().connectionId())) {
                custody.violation(response + " discarded while its connection is open");
            }
        }
    }

    @Override
    public void wakeup() {
        wakeups.incrementAndGet();
    }

    /** @return true while a response {@link #respond responded} is not yet taken by a {@link #round}; thread: any */
    @Override
    public boolean responsesQueued() {
        return !responses.isEmpty();
    }

    @Override
    public ResponseKind kindOf(FakeResponse response) {
        return response.kind();
    }

    @Override
    public FakeRequest requestOf(FakeResponse response) {
        return response.request();
    }

    @Override
    public RequestContext contextOf(FakeRequest request) {
        return request.context();
    }

    /** @return whether the listener may take the action now: on the processor's thread, and not as an observer */
    private boolean act(String name) {
        if (observer && !name.equals("isOpen")) {
            custody.violation("an observer called " + name + ": it owns no connection");
            return false;
        }
        return custody.action(name);
    }

    private void requireProcessorThread(String step) {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException(step + ": drive the fake processor from the thread that made it");
        }
    }

    /** Runs an event of the listener that returns nothing; a throwable is a violation. */
    private void tell(String name, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            custody.violation(name + " threw " + e);
        }
    }

    /** Runs an event of the listener; a throwable is a violation, and the event's default is used, as a broker does. */
    private <T> T event(String name, Supplier<T> call, T fallback) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            custody.violation(name + " threw " + e);
            return fallback;
        }
    }
}
