package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.plugin.testkit.KafkaRequests.Parsed;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.MuteEvent;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.ResponseKind;
import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * A deterministic, single-threaded model of a Kafka 4.4 broker's network layer, as the kpipe
 * interceptor reports it to a {@link PipelineCoordinator}: network processors
 * ({@code kafka.network.Processor} run loop, selector, {@link FakeKafkaChannel} mute state machine,
 * response queue, in-flight sends), the shared request queue and the request handler threads,
 * delayed completions (acks=all purgatory, fetch long poll), quota throttle windows, and the clients
 * at the other end of each connection.
 *
 * <p>A test drives it one {@link Step} at a time; {@link #enabled} lists every event the real broker
 * could run next (concurrency is modelled by interleaving: handler threads, purgatory completions,
 * throttle expiries, socket writes and the network threads' micro-steps interleave in any order).
 * Every step is checked against the invariants listed on {@link #checkInvariants()}; a violation
 * throws {@link AssertionError} with the step trace and a dump of the state.
 */
final class FakeBroker {

    enum StepType {
        /** A network thread runs one step of its run loop (a micro-step, or a whole phase). */
        NET,
        /** A client writes its next request to the socket. */
        WRITE,
        /** A free handler thread takes a request from the request queue and runs KafkaApis.handle. */
        HANDLE,
        /** A handler thread returns from KafkaApis.handle (onRequestDispatched). */
        RETURN,
        /** A delayed response (purgatory) is enqueued. */
        COMPLETE,
        /** A throttle window expires: EndThrottling is enqueued. */
        END_THROTTLE,
        /** The socket finishes writing a connection's in-progress send. */
        SEND_DONE,
        /** A client closes its connection. */
        DISCONNECT
    }

    record Step(StepType type, int arg) {
        @Override
        public String toString() {
            return type + "(" + arg + ")";
        }
    }

    /** The phases of {@code Processor.run}. */
    enum Phase {
        ROUND_ENTER, DEQUEUE, ROUND_EXIT, POLL, RECEIVES, SENDS, DISCONNECTS
    }

    /** A broker request handle ({@code RequestChannel.Request}). */
    final class Request {
        final Conn conn;
        final int index;
        final Scenario.Req spec;
        final Parsed parsed;
        boolean read;
        Admission admission;
        boolean forwarded;
        boolean queued;
        boolean handled;
        boolean returned;
        boolean responded;
        /** Its response was written, completed or dropped. */
        boolean settled;

        Request(Conn conn, int index, Scenario.Req spec, Parsed parsed) {
            this.conn = conn;
            this.index = index;
            this.spec = spec;
            this.parsed = parsed;
        }

        RequestContext context() {
            return parsed.context();
        }

        AbstractRequest body() {
            return parsed.body();
        }

        int correlationId() {
            return parsed.context().header.correlationId();
        }

        String state() {
            return (read ? "r" : "") + (admission == null ? "" : admission.name().substring(0, 2)) + (forwarded ? "f" : "")
                + (queued ? "q" : "") + (handled ? "h" : "") + (returned ? "d" : "") + (responded ? "R" : "")
                + (settled ? "s" : "");
        }

        @Override
        public String toString() {
            return "c" + conn.index + "." + index + ":" + spec + "[corr=" + correlationId() + "]";
        }
    }

    enum ResponseStatus {
        /** On a response queue, or held by kpipe. */
        PENDING,
        /** Handed to the selector (a send in progress). */
        SENDING,
        /** Written to the client. */
        WRITTEN,
        /** NoOp, close-connection or control response processed. */
        PROCESSED,
        /** Dropped by the broker: its connection is closed. */
        DROPPED,
        /** Discarded by kpipe: its connection is closed. */
        DISCARDED
    }

    /** A broker response handle ({@code RequestChannel.Response}). */
    final class Response {
        final ResponseKind kind;
        final Request request;
        ResponseStatus status = ResponseStatus.PENDING;
        int handedToBroker;
        int completions;

        Response(ResponseKind kind, Request request) {
            this.kind = kind;
            this.request = request;
        }

        String id() {
            return kind.name().charAt(0) + kind.name().substring(kind.name().length() - 2) + "/c" + request.conn.index + "."
                + request.index;
        }

        @Override
        public String toString() {
            return id() + ":" + status;
        }
    }

    /** One connection: the broker's channel and the client at the other end. */
    final class Conn {
        final int index;
        final String id;
        final Proc proc;
        final Scenario.Client client;
        final List<Request> requests = new ArrayList<>();
        final FakeKafkaChannel channel = new FakeKafkaChannel();
        boolean open = true;
        boolean clientClosed;
        boolean closedByBroker;
        /** Inside Processor.close: the hook runs before the selector closes the channel. */
        boolean closing;
        /** Written by the client, not yet read by the broker. */
        final ArrayDeque<Request> inbound = new ArrayDeque<>();
        /** The selector's in-progress send (KafkaChannel.send), or null. */
        Response send;
        boolean sendDone;
        int written;
        final List<Request> received = new ArrayList<>();
        int lastHandled = -1;
        final List<Request> dispatchPhase = new ArrayList<>();

        Conn(int index, Proc proc, Scenario.Client client) {
            this.index = index;
            this.id = Scenario.connectionId(index);
            this.proc = proc;
            this.client = client;
        }

        boolean clientActive() {
            return !clientClosed && !closedByBroker;
        }

        int clientInflight() {
            int n = 0;
            for (int i = 0; i < written; i++) {
                if (!requests.get(i).spec.kind().noResponse()) {
                    n++;
                }
            }
            return n - received.size();
        }

        Request nextExpectedResponse() {
            int from = received.isEmpty() ? 0 : received.get(received.size() - 1).index + 1;
            for (int i = from; i < written; i++) {
                if (!requests.get(i).spec.kind().noResponse()) {
                    return requests.get(i);
                }
            }
            return null;
        }
    }

    /** A network processor: the {@link NetworkProcessor} kpipe sees, and its run loop. */
    final class Proc implements NetworkProcessor {
        final int index;
        final List<Conn> conns = new ArrayList<>();
        final ArrayDeque<Response> responseQueue = new ArrayDeque<>();
        final Map<Conn, Response> inflightResponses = new LinkedHashMap<>();
        final ArrayDeque<Request> completedReceives = new ArrayDeque<>();
        final ArrayDeque<Response> completedSends = new ArrayDeque<>();
        final List<Conn> disconnected = new ArrayList<>();
        Phase phase = Phase.ROUND_ENTER;
        /** Woken up (or never slept): the next run loop iteration runs. */
        boolean dirty = true;
        /** This iteration did something. */
        boolean effect;
        Object attachment;
        int wakeups;

        Proc(int index) {
            this.index = index;
        }

        Conn conn(String connectionId) {
            for (Conn c : conns) {
                if (c.id.equals(connectionId)) {
                    return c;
                }
            }
            throw new AssertionError("unknown connection " + connectionId);
        }

        @Override
        public String listenerName() {
            return "PLAINTEXT";
        }

        @Override
        public int id() {
            return index;
        }

        @Override
        public void mute(String connectionId) {
            Conn c = conn(connectionId);
            if (c.open) {
                c.channel.mute();
                effect = true;
            }
        }

        @Override
        public void unmute(String connectionId) {
            Conn c = conn(connectionId);
            if (c.open) {
                c.channel.maybeUnmute();
                effect = true;
            }
        }

        @Override
        public boolean isOpen(String connectionId) {
            return conn(connectionId).open;
        }

        @Override
        public void forward(Object request) {
            Request r = (Request) request;
            if (r.admission != Admission.HELD || r.forwarded) {
                fail("forward of a request that is not held: " + r);
            }
            r.forwarded = true;
            effect = true;
            queueForHandlers(r);
        }

        @Override
        public void deliverMuteEvent(String connectionId, MuteEvent event) {
            // Processor.handleChannelMuteEvent, reached through a method handle: its advice runs too.
            effect = true;
            muteEvent(this, conn(connectionId), event);
        }

        @Override
        public Object pollResponse() {
            return responseQueue.poll();
        }

        @Override
        public void discard(Object response) {
            Response r = (Response) response;
            if (r.request.conn.open && !r.request.conn.closing) {
                fail("discard of a response of an open connection: " + r);
            }
            if (r.status != ResponseStatus.PENDING || r.handedToBroker > 0) {
                fail("discard of a response already processed: " + r);
            }
            r.status = ResponseStatus.DISCARDED;
            r.request.settled = true;
            effect = true;
        }

        @Override
        public void attach(Object attachment) {
            this.attachment = attachment;
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void wakeup() {
            wakeups++;
            dirty = true;
        }

        @Override
        public ResponseKind kindOf(Object response) {
            return ((Response) response).kind;
        }

        @Override
        public Object requestOf(Object response) {
            return ((Response) response).request;
        }

        @Override
        public RequestContext contextOf(Object request) {
            return ((Request) request).context();
        }

        ProcessorPipelines pipelines() {
            return (ProcessorPipelines) attachment;
        }

        @Override
        public String toString() {
            return "processor-" + index;
        }
    }

    private static final Field CONNECTIONS;

    static {
        try {
            CONNECTIONS = PipelineCoordinator.class.getDeclaredField("connections");
            CONNECTIONS.setAccessible(true);
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Scenario scenario;
    final PipelineStats stats = new PipelineStats();
    final PipelineCoordinator coordinator;
    final InflightLimits limits;
    final List<Proc> procs = new ArrayList<>();
    final List<Conn> conns = new ArrayList<>();
    final ArrayDeque<Request> requestQueue = new ArrayDeque<>();
    final Request[] handlers;
    final List<Request> completions = new ArrayList<>();
    final List<Request> throttleEnds = new ArrayList<>();
    final List<Response> responses = new ArrayList<>();
    final List<Step> trace = new ArrayList<>();
    private final Map<String, ConnectionPipeline> owned;
    /** Check the invariants after each step (off while replaying a checked path). */
    boolean checking = true;
    /** How often notable situations occurred, for the property tests' coverage checks. */
    final Map<String, Integer> coverage = new TreeMap<>();

    @SuppressWarnings("unchecked")
    FakeBroker(Scenario scenario) {
        this.scenario = scenario;
        this.limits = new InflightLimits(scenario.maxInflight, scenario.maxInflightBytes);
        this.coordinator = new PipelineCoordinator(new RequestClassifier(KafkaRequests.policy()), limits, stats);
        coordinator.onTopicNames(KafkaRequests.TOPIC_NAMES);
        try {
            owned = (Map<String, ConnectionPipeline>) CONNECTIONS.get(coordinator);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
        for (int p = 0; p < scenario.processors; p++) {
            procs.add(new Proc(p));
        }
        for (int c = 0; c < scenario.clients.size(); c++) {
            Proc p = procs.get(c % procs.size());
            Conn conn = new Conn(c, p, scenario.clients.get(c));
            List<Scenario.Req> specs = conn.client.requests();
            for (int i = 0; i < specs.size(); i++) {
                conn.requests.add(new Request(conn, i, specs.get(i), scenario.parsed.get(c).get(i)));
            }
            conns.add(conn);
            p.conns.add(conn);
        }
        handlers = new Request[scenario.handlers];
    }

    /** Replays steps from the initial state, without re-checking the invariants (they held the first time). */
    static FakeBroker replay(Scenario scenario, Step[] path, int length) {
        FakeBroker b = new FakeBroker(scenario);
        b.checking = false;
        for (int i = 0; i < length; i++) {
            b.apply(path[i]);
        }
        b.checking = true;
        return b;
    }

    // ------------------------------------------------------------------ steps

    /** @return every step the broker may run next, in a fixed order */
    List<Step> enabled(boolean allowDisconnect) {
        List<Step> steps = new ArrayList<>();
        for (Proc p : procs) {
            if (p.phase != Phase.ROUND_ENTER || p.dirty) {
                steps.add(new Step(StepType.NET, p.index));
            }
        }
        for (Conn c : conns) {
            if (c.clientActive() && c.written < c.requests.size() && c.clientInflight() < c.client.depth()) {
                steps.add(new Step(StepType.WRITE, c.index));
            }
        }
        int free = 0;
        for (Request h : handlers) {
            if (h == null) {
                free++;
            }
        }
        for (int i = 0; i < Math.min(free, requestQueue.size()); i++) {
            steps.add(new Step(StepType.HANDLE, i));
        }
        for (int h = 0; h < handlers.length; h++) {
            if (handlers[h] != null) {
                steps.add(new Step(StepType.RETURN, h));
            }
        }
        for (int k = 0; k < completions.size(); k++) {
            steps.add(new Step(StepType.COMPLETE, k));
        }
        for (int k = 0; k < throttleEnds.size(); k++) {
            steps.add(new Step(StepType.END_THROTTLE, k));
        }
        for (Conn c : conns) {
            if (c.open && c.send != null && !c.sendDone) {
                steps.add(new Step(StepType.SEND_DONE, c.index));
            }
        }
        if (allowDisconnect) {
            for (Conn c : conns) {
                if (c.client.mayDisconnect() && c.clientActive()) {
                    steps.add(new Step(StepType.DISCONNECT, c.index));
                }
            }
        }
        return steps;
    }

    void apply(Step step) {
        trace.add(step);
        switch (step.type()) {
            case NET -> {
                Proc p = procs.get(step.arg());
                if (scenario.fineGrained) {
                    micro(p);
                } else {
                    do {
                        micro(p);
                    } while (p.phase != Phase.ROUND_ENTER && p.phase != Phase.POLL);
                }
            }
            case WRITE -> {
                Conn c = conns.get(step.arg());
                c.inbound.add(c.requests.get(c.written++));
                c.proc.dirty = true;
            }
            case HANDLE -> handle(step.arg());
            case RETURN -> {
                Request r = handlers[step.arg()];
                handlers[step.arg()] = null;
                r.returned = true;
                r.conn.dispatchPhase.remove(r);
                listen("onRequestDispatched", () -> {
                    coordinator.onRequestDispatched(r, r.context());
                    return null;
                });
            }
            case COMPLETE -> respond(completions.remove(step.arg()));
            case END_THROTTLE -> {
                Request r = throttleEnds.remove(step.arg());
                enqueue(new Response(ResponseKind.END_THROTTLING, r));
            }
            case SEND_DONE -> sendDone(conns.get(step.arg()));
            case DISCONNECT -> {
                Conn c = conns.get(step.arg());
                c.clientClosed = true;
                c.proc.dirty = true;
            }
        }
        if (checking) {
            checkInvariants();
        }
    }

    private void handle(int queueIndex) {
        Request r = removeAt(requestQueue, queueIndex);
        int h = 0;
        while (handlers[h] != null) {
            h++;
        }
        handlers[h] = r;
        if (r.index <= r.conn.lastHandled) {
            fail("dispatch order broken on connection " + r.conn.index + ": " + r + " handled after request "
                + r.conn.lastHandled);
        }
        r.conn.lastHandled = r.index;
        r.handled = true;
        // KafkaApis.handle: the local work happens now; the response now or later.
        if (r.spec.delayed()) {
            completions.add(r);
        } else {
            respond(r);
        }
    }

    private void respond(Request r) {
        if (r.spec.throttled()) {
            enqueue(new Response(ResponseKind.START_THROTTLING, r));
            throttleEnds.add(r);
        }
        ResponseKind kind = ResponseKind.SEND;
        if (r.spec.kind().noResponse()) {
            kind = r.spec.closeConnection() ? ResponseKind.CLOSE_CONNECTION : ResponseKind.NO_OP;
        }
        r.responded = true;
        enqueue(new Response(kind, r));
    }

    /** {@code RequestChannel.sendResponse}: onto the processor's queue, and wake it up. */
    private void enqueue(Response r) {
        responses.add(r);
        r.request.conn.proc.responseQueue.add(r);
        r.request.conn.proc.dirty = true;
    }

    private void sendDone(Conn c) {
        Response r = c.send;
        c.sendDone = true;
        c.proc.dirty = true;
        r.status = ResponseStatus.WRITTEN;
        Request expected = c.nextExpectedResponse();
        if (expected == null || expected != r.request) {
            fail("client " + c.index + " received the response with correlation id " + r.request.correlationId()
                + " (" + r.request + ") but expected " + (expected == null ? "none" : expected.correlationId() + " ("
                + expected + ")"));
        }
        c.received.add(r.request);
    }

    private void queueForHandlers(Request r) {
        for (Request earlier : r.conn.dispatchPhase) {
            // Stock Kafka too reads the next request once a classic request's response is written, while
            // its handler may not have returned yet (a held request forwarded on downgrade is classic).
            boolean stockClassic = (earlier.admission == Admission.CLASSIC || earlier.forwarded) && earlier.settled;
            if (!stockClassic) {
                fail("two requests of connection " + r.conn.index + " in the dispatch phase: " + earlier + " ("
                    + earlier.state() + ") and " + r);
            }
        }
        r.conn.dispatchPhase.add(r);
        r.queued = true;
        requestQueue.add(r);
    }

    // ------------------------------------------------------------------ the network thread

    private void micro(Proc p) {
        switch (p.phase) {
            case ROUND_ENTER -> {
                p.dirty = false;
                p.effect = false;
                listen("onProcessorRound", () -> {
                    coordinator.onProcessorRound(p);
                    return null;
                });
                p.phase = Phase.DEQUEUE;
            }
            case DEQUEUE -> {
                Response in = p.responseQueue.poll();
                if (in != null) {
                    p.effect = true;
                }
                Object out = listen("onResponseDequeued", () -> coordinator.onResponseDequeued(p, in));
                if (out == null) {
                    p.phase = Phase.ROUND_EXIT;
                } else {
                    p.effect = true;
                    process(p, (Response) out);
                }
            }
            case ROUND_EXIT -> {
                listen("onProcessorRound", () -> {
                    coordinator.onProcessorRound(p);
                    return null;
                });
                p.phase = Phase.POLL;
            }
            case POLL -> {
                poll(p);
                p.phase = Phase.RECEIVES;
            }
            case RECEIVES -> {
                Request r = p.completedReceives.poll();
                if (r != null) {
                    receive(p, r);
                }
                if (p.completedReceives.isEmpty()) {
                    p.phase = Phase.SENDS;
                }
            }
            case SENDS -> {
                Response s = p.completedSends.poll();
                if (s != null) {
                    sendCompleted(p, s);
                }
                if (p.completedSends.isEmpty()) {
                    p.phase = Phase.DISCONNECTS;
                }
            }
            case DISCONNECTS -> {
                processDisconnected(p);
                p.phase = Phase.ROUND_ENTER;
                if (p.effect) {
                    p.dirty = true;
                } else if (!p.dirty) {
                    ProcessorPipelines pp = p.pipelines();
                    if (pp != null && (!pp.dispatched.isEmpty() || !pp.pending.isEmpty() || !pp.ready.isEmpty())) {
                        fail("processor " + p.index + " goes to sleep with kpipe work pending and no wakeup"
                            + " (it would wait for the 300 ms poll timeout)");
                    }
                }
            }
        }
    }

    /** {@code Processor.processNewResponses}, one response. */
    private void process(Proc p, Response r) {
        r.handedToBroker++;
        if (r.handedToBroker > 1) {
            fail("response handed to the broker twice: " + r);
        }
        if (r.status != ResponseStatus.PENDING) {
            fail("response handed to the broker after it was " + r.status + ": " + r);
        }
        Conn c = r.request.conn;
        switch (r.kind) {
            case NO_OP -> {
                if (owned.containsKey(c.id)) {
                    note("acks=0 on a pipelined connection");
                }
                r.status = ResponseStatus.PROCESSED;
                completed(p, r);
                muteEvent(p, c, MuteEvent.RESPONSE_SENT);
                tryUnmute(p, c);
            }
            case SEND -> {
                if (!c.open) {
                    // Processor.sendResponse: no channel; Request.updateRequestMetrics (not hooked)
                    r.status = ResponseStatus.DROPPED;
                    r.request.settled = true;
                } else {
                    if (c.send != null || p.inflightResponses.containsKey(c)) {
                        fail("KafkaChannel.setSend would throw: a send is already in progress on connection "
                            + c.index + " (" + c.send + ") when " + r + " is sent");
                    }
                    r.status = ResponseStatus.SENDING;
                    c.send = r;
                    c.sendDone = false;
                    p.inflightResponses.put(c, r);
                }
            }
            case CLOSE_CONNECTION -> {
                note("close-connection response");
                r.status = ResponseStatus.PROCESSED;
                completed(p, r);
                close(p, c);
            }
            case START_THROTTLING -> {
                r.status = ResponseStatus.PROCESSED;
                muteEvent(p, c, MuteEvent.THROTTLE_STARTED);
            }
            case END_THROTTLING -> {
                r.status = ResponseStatus.PROCESSED;
                muteEvent(p, c, MuteEvent.THROTTLE_ENDED);
                tryUnmute(p, c);
            }
        }
    }

    /** {@code Selector.poll}: disconnections, finished sends, one request per unmuted connection. */
    private void poll(Proc p) {
        for (Conn c : p.conns) {
            if (!c.open) {
                continue;
            }
            if (c.clientClosed) {
                closeChannel(c);
                p.disconnected.add(c);
                p.effect = true;
                continue;
            }
            if (c.send != null && c.sendDone) {
                p.completedSends.add(c.send);
                c.send = null;
                c.sendDone = false;
                p.effect = true;
            }
            if (!c.channel.isMuted() && !c.inbound.isEmpty()) {
                p.completedReceives.add(c.inbound.poll());
                p.effect = true;
            }
        }
    }

    /** {@code Processor.processCompletedReceives}, one receive. */
    private void receive(Proc p, Request r) {
        Conn c = r.conn;
        ConnectionPipeline cp = owned.get(c.id);
        if (cp != null) {
            if (cp.awaitingDispatch != null) {
                fail("connection " + c.index + " read while a request awaits dispatch: " + r);
            }
            if (cp.mode == ConnectionPipeline.Mode.DRAINING) {
                fail("connection " + c.index + " read while draining: " + r);
            }
            if (cp.throttle.throttled()) {
                fail("connection " + c.index + " read while throttled: " + r);
            }
            if (!limits.admitsAnother(cp.slots.size(), cp.inflightBytes)) {
                fail("connection " + c.index + " read beyond the in-flight limit (" + cp.slots.size() + " requests, "
                    + cp.inflightBytes + " bytes): " + r);
            }
        }
        r.read = true;
        Admission a = listen("onRequestReceived",
            () -> coordinator.onRequestReceived(p, r, r.context(), r.body(), r.parsed.sizeInBytes()));
        r.admission = a;
        Scenario.Kind kind = r.spec.kind();
        Admission expected;
        if (cp == null) {
            expected = kind.upgrades() ? Admission.PIPELINED : Admission.CLASSIC;
        } else if (kind.exclusive()) {
            expected = cp.slots.isEmpty() && !cp.throttle.throttled() ? Admission.CLASSIC : Admission.HELD;
        } else {
            expected = Admission.PIPELINED;
        }
        if (a != expected) {
            fail("admission of " + r + " is " + a + ", expected " + expected);
        }
        if (a != Admission.HELD) {
            queueForHandlers(r);
        } else {
            note("drain");
        }
        if (cp != null && a == Admission.CLASSIC) {
            note("downgrade without drain");
        }
        c.channel.mute();
        muteEvent(p, c, MuteEvent.REQUEST_RECEIVED);
        p.effect = true;
    }

    /** {@code Processor.processCompletedSends}, one send. */
    private void sendCompleted(Proc p, Response r) {
        Conn c = r.request.conn;
        Response inflight = p.inflightResponses.remove(c);
        if (inflight != r) {
            fail("completed send " + r + " is not the in-flight response " + inflight);
        }
        completed(p, r);
        muteEvent(p, c, MuteEvent.RESPONSE_SENT);
        tryUnmute(p, c);
        p.effect = true;
    }

    /** {@code Processor.processDisconnected} (the hook reports every closed connection first). */
    private void processDisconnected(Proc p) {
        if (p.disconnected.isEmpty()) {
            return;
        }
        for (Conn c : p.disconnected) {
            noteClose(c);
            listen("onConnectionClosed", () -> {
                coordinator.onConnectionClosed(p, c.id);
                return null;
            });
        }
        for (Conn c : p.disconnected) {
            Response r = p.inflightResponses.remove(c);
            if (r != null) {
                completed(p, r);
            }
        }
        p.disconnected.clear();
        p.effect = true;
    }

    /** {@code Processor.close(String)}: the broker closes a connection. */
    private void close(Proc p, Conn c) {
        c.closing = true;
        noteClose(c);
        listen("onConnectionClosed", () -> {
            coordinator.onConnectionClosed(p, c.id);
            return null;
        });
        if (c.open) {
            closeChannel(c);
            c.closedByBroker = true;
            Response r = p.inflightResponses.remove(c);
            if (r != null) {
                completed(p, r);
            }
        }
    }

    private void noteClose(Conn c) {
        ConnectionPipeline cp = owned.get(c.id);
        if (cp == null) {
            return;
        }
        note("close of a pipelined connection");
        if (cp.held != null) {
            note("close with a held request");
        }
        boolean head = true;
        for (Slot s : cp.slots) {
            if (s.response != null && !(head && cp.sendOutstanding)) {
                note("close with parked responses");
            }
            head = false;
        }
        if (cp.throttle.throttled()) {
            note("close while throttled");
        }
    }

    void note(String situation) {
        coverage.merge(situation, 1, Integer::sum);
    }

    private void closeChannel(Conn c) {
        c.open = false;
        c.closing = false;
        c.inbound.clear();
        c.send = null;
        c.sendDone = false;
    }

    /** {@code Processor.updateRequestMetrics}. */
    private void completed(Proc p, Response r) {
        r.completions++;
        if (r.completions > 1) {
            fail("response completed twice: " + r);
        }
        r.request.settled = true;
        listen("onResponseCompleted", () -> {
            coordinator.onResponseCompleted(p, r);
            return null;
        });
    }

    /** {@code Processor.handleChannelMuteEvent}. */
    private void muteEvent(Proc p, Conn c, MuteEvent event) {
        ConnectionPipeline cp = owned.get(c.id);
        if (cp != null && event == MuteEvent.THROTTLE_STARTED) {
            note(cp.mode == ConnectionPipeline.Mode.DRAINING ? "throttle starts while draining" : "throttle starts");
        }
        boolean consumed = listen("onMuteEvent", () -> coordinator.onMuteEvent(p, c.id, event));
        if (!consumed && c.open) {
            try {
                c.channel.handleChannelMuteEvent(event);
            } catch (IllegalStateException e) {
                fail("KafkaChannel of connection " + c.index + " threw: " + e.getMessage());
            }
        }
    }

    /** {@code Processor.tryUnmuteChannel}. */
    private void tryUnmute(Proc p, Conn c) {
        boolean consumed = listen("onTryUnmute", () -> coordinator.onTryUnmute(p, c.id));
        if (!consumed && c.open) {
            c.channel.maybeUnmute();
        }
    }

    private <T> T listen(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            AssertionError error = new AssertionError(describe("the listener threw from " + what + ": " + e));
            error.initCause(e);
            throw error;
        }
    }

    // ------------------------------------------------------------------ invariants

    /**
     * After every step: kpipe's bookkeeping matches the broker (a connection kpipe owns is only ever
     * NOT_MUTED or MUTED in Kafka's state machine, and muted exactly when kpipe thinks so); at most
     * {@code maxInflight} requests in flight per connection; the gauges equal what they count; no
     * plugin fault or classification fallback. The other invariants are checked where they can break:
     * the KafkaChannel never throws, responses reach each client in arrival order, one send per
     * connection, the dispatch phase and dispatch order per connection, no read of a connection kpipe
     * keeps muted, every response handed to the broker or discarded once.
     */
    void checkInvariants() {
        int inflight = 0;
        int heldRequests = 0;
        int heldResponses = 0;
        int throttled = 0;
        for (ConnectionPipeline cp : owned.values()) {
            Conn c = conn(cp.id);
            if (c.open && !cp.closed) {
                if (c.channel.state != FakeKafkaChannel.State.NOT_MUTED && c.channel.state != FakeKafkaChannel.State.MUTED) {
                    fail("connection " + c.index + " owned by kpipe is in Kafka state " + c.channel.state);
                }
                if (cp.muted != c.channel.isMuted()) {
                    fail("kpipe thinks connection " + c.index + " is " + (cp.muted ? "muted" : "unmuted")
                        + " but its channel is " + c.channel.state);
                }
            }
            if (cp.slots.size() > scenario.maxInflight) {
                fail("connection " + c.index + " has " + cp.slots.size() + " requests in flight");
            }
            if (!limits.admitsAnother(cp.slots.size(), cp.inflightBytes)) {
                note("in-flight limit reached");
            }
            if (cp.mode == ConnectionPipeline.Mode.DRAINING && cp.slots.isEmpty() && cp.throttle.throttled()) {
                note("drained but throttled");
            }
            if (cp.sendOutstanding && (cp.slots.isEmpty() || cp.slots.peekFirst().response == null)) {
                fail("connection " + c.index + " has a send outstanding without a head response");
            }
            if ((cp.mode == ConnectionPipeline.Mode.DRAINING) != (cp.held != null)) {
                fail("connection " + c.index + " is " + cp.mode + " with held=" + cp.held);
            }
            inflight += cp.slots.size();
            heldRequests += cp.held != null ? 1 : 0;
            throttled += cp.throttle.throttled() ? 1 : 0;
            boolean head = true;
            for (Slot s : cp.slots) {
                if (s.response != null && !(head && cp.sendOutstanding)) {
                    heldResponses++;
                }
                head = false;
            }
        }
        gauge("pipelinedConnections", stats.pipelinedConnections(), owned.size());
        gauge("inflightRequests", stats.inflightRequests(), inflight);
        gauge("heldRequests", stats.heldRequests(), heldRequests);
        gauge("heldResponses", stats.heldResponses(), heldResponses);
        gauge("throttledConnections", stats.throttledConnections(), throttled);
        if (stats.pluginFaults() != 0) {
            fail("plugin faults: " + stats.pluginFaults());
        }
        if (stats.classificationFallbacks() != 0) {
            fail("classification fallbacks: " + stats.classificationFallbacks());
        }
    }

    private void gauge(String name, long value, long expected) {
        if (value != expected) {
            fail("gauge " + name + " = " + value + ", but it counts " + expected);
        }
    }

    /** @return true when nothing is left to do (client disconnections aside) */
    boolean quiescent() {
        return enabled(false).isEmpty();
    }

    /**
     * In a quiescent state: every client still connected got every response, in order; every request
     * the broker read was handled once; every response was handed to the broker or discarded; every
     * open connection is readable again and kpipe holds nothing for it (no wedge).
     */
    void checkAllAnswered() {
        if (!quiescent()) {
            fail("not quiescent: " + enabled(false));
        }
        for (Conn c : conns) {
            if (c.clientActive()) {
                if (c.written != c.requests.size() || !c.inbound.isEmpty()) {
                    fail("client " + c.index + " wedged: wrote " + c.written + "/" + c.requests.size() + ", unread "
                        + c.inbound.size());
                }
                long expected = c.requests.stream().filter(r -> !r.spec.kind().noResponse()).count();
                if (c.received.size() != expected) {
                    fail("client " + c.index + " wedged: received " + c.received.size() + " of " + expected + " responses");
                }
                if (c.channel.isMuted()) {
                    fail("connection " + c.index + " left " + c.channel.state);
                }
                ConnectionPipeline cp = owned.get(c.id);
                if (cp != null && (!cp.slots.isEmpty() || cp.held != null || cp.awaitingDispatch != null
                    || cp.throttle.throttled() || cp.mode != ConnectionPipeline.Mode.PIPELINED)) {
                    fail("kpipe still holds state for connection " + c.index + ": " + cp);
                }
            }
            for (Request r : c.requests) {
                if (r.read && !r.handled) {
                    fail("request read but never handled: " + r + " (" + r.state() + ")");
                }
            }
        }
        for (Response r : responses) {
            boolean open = r.request.conn.open;
            if (r.status == ResponseStatus.PENDING || (open && r.status == ResponseStatus.SENDING)) {
                fail("response never completed: " + r);
            }
            if (open && r.status == ResponseStatus.WRITTEN && r.completions != 1) {
                fail("response written but never completed: " + r);
            }
        }
    }

    /**
     * Every client closes; the broker runs to quiescence; then kpipe must have forgotten everything:
     * no connection, every gauge 0, no per-processor work.
     */
    void finishAndCheckGaugesZero(int maxSteps) {
        for (Conn c : conns) {
            if (c.clientActive()) {
                apply(new Step(StepType.DISCONNECT, c.index));
            }
        }
        runFair(maxSteps);
        checkAllAnswered();
        if (!owned.isEmpty()) {
            fail("kpipe still owns connections after every client closed: " + owned.keySet());
        }
        gauge("pipelinedConnections", stats.pipelinedConnections(), 0);
        gauge("heldResponses", stats.heldResponses(), 0);
        gauge("heldRequests", stats.heldRequests(), 0);
        gauge("inflightRequests", stats.inflightRequests(), 0);
        gauge("throttledConnections", stats.throttledConnections(), 0);
        for (Proc p : procs) {
            ProcessorPipelines pp = p.pipelines();
            if (pp != null && (!pp.ready.isEmpty() || !pp.pending.isEmpty() || !pp.dispatched.isEmpty())) {
                fail("processor " + p.index + " still has kpipe work: ready=" + pp.ready.size() + " pending="
                    + pp.pending.size() + " dispatched=" + pp.dispatched.size());
            }
        }
    }

    /** Runs to quiescence, picking the enabled steps round-robin (fair: every enabled step eventually runs). */
    void runFair(int maxSteps) {
        runFair(maxSteps, s -> true);
    }

    /**
     * Runs the allowed steps round-robin until none is enabled.
     *
     * @param maxSteps fail (livelock) beyond this many steps
     * @param allowed which steps may run
     */
    void runFair(int maxSteps, java.util.function.Predicate<Step> allowed) {
        int next = 0;
        for (int n = 0; ; n++) {
            List<Step> steps = new ArrayList<>(enabled(false));
            steps.removeIf(allowed.negate());
            if (steps.isEmpty()) {
                return;
            }
            if (n >= maxSteps) {
                fail("no quiescence after " + maxSteps + " fair steps (livelock)");
            }
            apply(steps.get(next++ % steps.size()));
        }
    }

    // ------------------------------------------------------------------ state

    Conn conn(String id) {
        for (Conn c : conns) {
            if (c.id.equals(id)) {
                return c;
            }
        }
        throw new AssertionError("unknown connection " + id);
    }

    ConnectionPipeline owned(int conn) {
        return owned.get(conns.get(conn).id);
    }

    /**
     * A canonical description of every piece of state that can influence what happens next (the
     * fake's and kpipe's), for exhaustive exploration with memoization.
     */
    String fingerprint() {
        StringBuilder sb = new StringBuilder(512);
        IdentityHashMap<ConnectionPipeline, Integer> gens = new IdentityHashMap<>();
        for (Proc p : procs) {
            sb.append('P').append(p.phase.ordinal()).append(p.dirty ? 'd' : '-').append(p.effect ? 'e' : '-');
            sb.append('q');
            p.responseQueue.forEach(r -> sb.append(r.id()).append(','));
            sb.append('i');
            p.inflightResponses.values().forEach(r -> sb.append(r.id()).append(','));
            sb.append('R');
            p.completedReceives.forEach(r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
            sb.append('S');
            p.completedSends.forEach(r -> sb.append(r.id()).append(','));
            sb.append('D');
            p.disconnected.forEach(c -> sb.append(c.index).append(','));
            ProcessorPipelines pp = p.pipelines();
            if (pp != null) {
                sb.append("|r");
                pp.ready.forEach(r -> sb.append(((Response) r).id()).append(','));
                sb.append('p');
                pp.pending.forEach(cp -> describe(sb, cp, gens));
                sb.append('x');
                pp.dispatched.forEach(cp -> describe(sb, cp, gens));
            }
            sb.append(';');
        }
        for (Conn c : conns) {
            sb.append('C').append(c.open ? 'o' : '-').append(c.clientClosed ? 'x' : '-').append(c.closedByBroker ? 'b' : '-')
                .append(c.channel.state.ordinal()).append('w').append(c.written).append('u').append(c.inbound.size())
                .append('s').append(c.send == null ? "" : c.send.id()).append(c.sendDone ? '!' : '-')
                .append('v').append(c.received.size()).append('h').append(c.lastHandled).append('[');
            for (Request r : c.requests) {
                sb.append(r.state()).append(',');
            }
            sb.append(']');
        }
        sb.append("Q");
        requestQueue.forEach(r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("H");
        for (Request r : handlers) {
            sb.append(r == null ? "_" : r.conn.index + "." + r.index).append(',');
        }
        sb.append("W");
        completions.forEach(r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("T");
        throttleEnds.forEach(r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("Z");
        for (Response r : responses) {
            sb.append(r.id()).append(r.status.ordinal()).append(r.handedToBroker).append(r.completions).append(',');
        }
        sb.append("K");
        new TreeMap<>(owned).forEach((id, cp) -> describe(sb, cp, gens));
        sb.append('G').append(stats.pipelinedConnections()).append(',').append(stats.inflightRequests()).append(',')
            .append(stats.heldRequests()).append(',').append(stats.heldResponses()).append(',')
            .append(stats.throttledConnections());
        return sb.toString();
    }

    private void describe(StringBuilder sb, ConnectionPipeline cp, IdentityHashMap<ConnectionPipeline, Integer> gens) {
        Integer gen = gens.get(cp);
        if (gen != null) {
            sb.append('#').append(gen).append(',');
            return;
        }
        gens.put(cp, gens.size());
        sb.append('{').append(cp.id.substring(cp.id.lastIndexOf('-') + 1)).append(owned.get(cp.id) == cp ? 'o' : 's')
            .append(cp.mode.ordinal()).append(cp.sendOutstanding ? 'S' : '-').append(cp.muted ? 'M' : '-')
            .append(cp.closed ? 'C' : '-').append(cp.scheduled ? 'P' : '-').append('t').append(cp.throttle.open())
            .append('b').append(cp.inflightBytes).append('a').append(req(cp.awaitingDispatch)).append('h')
            .append(req(cp.held)).append('[');
        for (Slot s : cp.slots) {
            sb.append(req(s.request)).append(':').append(s.response == null ? "" : ((Response) s.response).id()).append(',');
        }
        sb.append("]}");
    }

    private static String req(Object request) {
        if (request == null) {
            return "";
        }
        Request r = (Request) request;
        return r.conn.index + "." + r.index;
    }

    /** @return a readable dump of the state */
    String dump() {
        StringBuilder sb = new StringBuilder();
        sb.append(scenario).append('\n');
        for (Proc p : procs) {
            sb.append("  processor ").append(p.index).append(": phase=").append(p.phase).append(" dirty=").append(p.dirty)
                .append(" responseQueue=").append(p.responseQueue).append(" inflight=").append(p.inflightResponses.values());
            ProcessorPipelines pp = p.pipelines();
            if (pp != null) {
                sb.append(" kpipe.ready=").append(pp.ready.size()).append(" pending=").append(pp.pending.size())
                    .append(" dispatched=").append(pp.dispatched.size());
            }
            sb.append('\n');
        }
        for (Conn c : conns) {
            sb.append("  connection ").append(c.index).append(": ").append(c.open ? "open" : "closed")
                .append(c.clientClosed ? " (client closed)" : "").append(c.closedByBroker ? " (broker closed)" : "")
                .append(" kafka=").append(c.channel.state).append(" written=").append(c.written).append('/')
                .append(c.requests.size()).append(" unread=").append(c.inbound.size()).append(" send=").append(c.send)
                .append(c.sendDone ? " (done)" : "").append(" received=").append(c.received.size()).append('\n');
            for (Request r : c.requests) {
                sb.append("    ").append(r).append(' ').append(r.state()).append('\n');
            }
            ConnectionPipeline cp = owned.get(c.id);
            if (cp != null) {
                sb.append("    kpipe: ").append(cp).append('\n');
            }
        }
        sb.append("  requestQueue=").append(requestQueue).append(" handlers=").append(java.util.Arrays.toString(handlers))
            .append(" completions=").append(completions).append(" throttleEnds=").append(throttleEnds).append('\n');
        sb.append("  stats: pipelined=").append(stats.pipelinedConnections()).append(" inflight=")
            .append(stats.inflightRequests()).append(" heldRequests=").append(stats.heldRequests())
            .append(" heldResponses=").append(stats.heldResponses()).append(" throttled=")
            .append(stats.throttledConnections()).append(" faults=").append(stats.pluginFaults()).append('\n');
        return sb.toString();
    }

    private String describe(String problem) {
        int from = Math.max(0, trace.size() - 80);
        return problem + "\nsteps (" + trace.size() + ", last " + (trace.size() - from) + "): "
            + trace.subList(from, trace.size()) + "\n" + dump();
    }

    void fail(String problem) {
        throw new AssertionError(describe(problem));
    }

    private static <T> T removeAt(ArrayDeque<T> deque, int index) {
        if (index == 0) {
            return deque.poll();
        }
        List<T> list = new ArrayList<>(deque);
        T t = list.remove(index);
        deque.clear();
        deque.addAll(list);
        return t;
    }
}
