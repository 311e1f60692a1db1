// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Reservation;
import dev.kpipe.extension.StoragePressure;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.pipeline.FakeKafkaChannel.MuteEvent;
import dev.kpipe.plugin.pressure.BrokerQueuePressure;
import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.plugin.testkit.KafkaRequests.Parsed;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.BrokerLoad;
import dev.kpipe.spi.BrokerServices;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import dev.kpipe.spi.ResponseKind;
import dev.kpipe.spi.TopicNames;
import dev.kpipe.spi.testkit.ContractCheck;
import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * A deterministic, single-threaded model of a Kafka 4.4 broker's network layer, as the kpipe
 * interceptor reports it to a {@link PipelineCoordinator<Request, Response>}: network processors
 * ({@code kafka.network.Processor} run loop, selector, {@link FakeKafkaChannel} mute state machine,
 * response queue, in-flight sends), the shared request queue and the request handler threads,
 * delayed completions (acks=all purgatory, fetch long poll), quota throttle windows, SASL
 * re-authentication (KIP-368: the handshake handled on the network thread, its response written by
 * the authenticator straight to the socket, no reads or response writes until it completes), and
 * the clients at the other end of each connection.
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
        DISCONNECT,
        /** The storage side becomes saturated (arg 1) or clears (arg 0): the plugin's StoragePressure flag flips. */
        PRESSURE,
        /** A delayed {@code ByteBudget.Waiter.admitted()} callback runs (arg: its index among the pending ones). */
        ADMIT,
        /**
         * A sleeping processor's selector poll times out (300 ms) and its run loop iterates; offered only while kpipe
         * keeps connections muted for storage pressure and the pressure has cleared (else a round does nothing).
         */
        TIMEOUT,
        /**
         * The config thread flips {@code kpipe.enable} (arg 0: disable, 1: enable again), as Kafka's dynamic broker
         * config does through {@code KpipePlugin.reconfigure}; offered while the scenario allows flips.
         */
        CONFIG,
        /** A connection's SASL re-authentication exchange completes (the channel is ready again). */
        REAUTH_DONE,
        /**
         * The transaction coordinator answers a verification (KIP-890; arg: its index among the outstanding ones): the
         * post-verification callback is queued as a {@code CallbackRequest} ({@code RequestChannel.sendCallbackRequest}).
         */
        VERIFIED,
        /**
         * A free handler runs a queued {@code CallbackRequest} (arg: its index): the append happens, then the response
         * (now, or later from the purgatory); then {@code callbackRequestCompleteTimeNanos} is set, and the dispatch is
         * signalled if handle already returned.
         */
        CALLBACK
    }

    record Step(StepType type, int arg) {
        @Override
        public String toString() {
            return type + "(" + arg + ")";
        }
    }

    /** The phases of {@code Processor.run}. */
    enum Phase {
        ROUND_ENTER,
        DEQUEUE,
        ROUND_EXIT,
        POLL,
        RECEIVES,
        SENDS,
        DISCONNECTS
    }

    /** A broker request handle ({@code RequestChannel.Request}). */
    final class Request implements Reauthentication {
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
        /** SASL_REAUTH: kpipe took the re-authentication over (onReauthentication returned true). */
        boolean reauthDeferred;
        /** SASL_REAUTH: re-authentication began (its handshake response was written). */
        boolean reauthBegun;
        /** PRODUCE_TXN_VERIFIED: handled, its append still to come (verification or callback outstanding). */
        boolean verifying;
        /** Its local work (for a produce, the append) happened: in handle, or in its post-verification callback. */
        boolean appended;
        /** Its response (not a throttle event) was taken from the broker's queue (DEQUEUE, or kpipe's pollResponse). */
        boolean responseDequeued;

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
            return (read ? "r" : "")
                    + (admission == null ? "" : admission.name().substring(0, 2))
                    + (forwarded ? "f" : "")
                    + (reauthDeferred ? "D" : "")
                    + (reauthBegun ? "B" : "")
                    + (queued ? "q" : "")
                    + (handled ? "h" : "")
                    + (verifying ? "v" : "")
                    + (appended ? "a" : "")
                    + (returned ? "d" : "")
                    + (responded ? "R" : "")
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
            return kind.name().charAt(0) + kind.name().substring(kind.name().length() - 2) + "/c" + request.conn.index
                    + "." + request.index;
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
        /** The SASL re-authentication exchange is in progress: the channel is not ready. */
        boolean authenticating;
        /**
         * kpipe owns the connection's mute state (the binding's ownership: taken by an admission PIPELINED or HELD, a
         * deferred re-authentication or a take-over at unmute; given back by a hand-back, an admission CLASSIC or a
         * re-authentication kpipe lets begin; ended by a close).
         */
        boolean pluginOwned;
        /** A SASL_REAUTH the client wrote whose re-authentication has not completed: it writes nothing more. */
        Request reauthPending;
        /** The request the broker refused (Kind.BAD) when it read it, or null. */
        Request rejected;
        /** The client's input ended (Kind.END) when the broker read it, or null. */
        Request inputEnded;
        /**
         * kpipe took over the close that a refusal or the end of the input calls for ({@code onRequestRejected} or
         * {@code onInputEnded} returned true).
         */
        boolean closeDeferred;

        /** @return the refused request or the end of the input: nothing after it is read; null if neither */
        Request breakAt() {
            return rejected != null ? rejected : inputEnded;
        }

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
    final class Proc implements NetworkProcessor<Request, Response> {
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
            if (c.authenticating) {
                fail("kpipe muted connection " + c.index
                        + " while it re-authenticates (the authenticator cannot read)");
            }
            if (c.open) {
                c.channel.mute();
                effect = true;
            }
        }

        @Override
        public void unmute(String connectionId) {
            if (scenario.faults.unmuteEvery() > 0 && ++unmuteCalls % scenario.faults.unmuteEvery() == 0) {
                injectedFaults++;
                note("unmute fault");
                throw new IllegalStateException("injected fault: Selector.unmute");
            }
            Conn c = conn(connectionId);
            if (c.authenticating) {
                fail("kpipe unmuted connection " + c.index + " while it re-authenticates");
            }
            if (c.breakAt() != null && c.open) {
                fail("kpipe unmuted connection " + c.index + " after " + c.breakAt()
                        + ": nothing after it may be read");
            }
            ConnectionPipeline<Request, Response> owner = owned.get(connectionId);
            if (signalFaulted && owner != null && !owner.inflight().isEmpty()) {
                fail("kpipe unmuted connection " + c.index + " right after its back-pressure check threw, with "
                        + owner.inflight().size()
                        + " requests in flight (it must fall back to classic: read only when answered)");
            }
            if (c.open) {
                if (c.channel.isMuted() && owned.containsKey(connectionId)) {
                    // after a faulty check (nothing in flight) kpipe reads on as a classic connection: stock Kafka
                    // has no storage-side check
                    if (signal.saturated() && !signalFaulted) {
                        fail("kpipe unmuted connection " + c.index + " while the storage side is saturated");
                    }
                    if (signalFaulted) {
                        note("unmute after a faulty check, nothing in flight");
                    }
                    unmuteLog.add(c.index);
                }
                c.channel.maybeUnmute();
                effect = true;
            }
        }

        @Override
        public boolean isOpen(String connectionId) {
            return conn(connectionId).open;
        }

        @Override
        public void release(Request r) {
            if (r.admission != Admission.HELD || r.forwarded) {
                fail("forward of a request that is not held: " + r);
            }
            r.forwarded = true;
            effect = true;
            queueForHandlers(r);
        }

        @Override
        public void beginReauthentication(String connectionId, Reauthentication reauthentication) {
            Request r = (Request) reauthentication;
            Conn c = conn(connectionId);
            if (c.pluginOwned) {
                fail("beginReauthentication of " + r + " while kpipe still owns connection " + c.index);
            }
            if (r.conn != c || !r.reauthDeferred || r.reauthBegun) {
                fail("beginReauthentication of " + r + " on connection " + c.index + ": not a deferred one");
            }
            if (!c.open) {
                fail("beginReauthentication of " + r + " after its connection closed");
            }
            effect = true;
            note("deferred re-authentication begins");
            FakeBroker.this.beginReauthentication(c, r);
        }

        @Override
        public void handBack(String connectionId, Request heldRequest) {
            Conn c = conn(connectionId);
            if (!c.pluginOwned) {
                fail("kpipe handed back connection " + c.index + ", which it does not own");
            }
            if (c.inputEnded != null) {
                fail("kpipe handed back connection " + c.index + " after its input ended");
            }
            c.pluginOwned = false;
            effect = true;
            if (heldRequest == null) {
                if (c.open) {
                    c.channel.maybeUnmute(); // Selector.unmute: as after a written response
                }
                return;
            }
            // Processor.handleChannelMuteEvent(REQUEST_RECEIVED), then the request is queued: as right after a read
            muteEvent(this, c, FakeKafkaChannel.MuteEvent.REQUEST_RECEIVED);
            release(heldRequest);
        }

        @Override
        public Response pollResponse() {
            Response r = responseQueue.poll();
            if (r != null && !r.kind.isControl()) {
                r.request.responseDequeued = true;
            }
            return r;
        }

        @Override
        public void close(String connectionId) {
            Conn c = conn(connectionId);
            if (!c.closeDeferred) {
                fail("kpipe closed connection " + c.index + ", whose close the broker did not leave to it");
            }
            if (c.open) {
                for (Request r : c.requests) {
                    if (r == c.breakAt()) {
                        break;
                    }
                    if (!r.spec.kind().noResponse() && !c.received.contains(r)) {
                        fail("kpipe closed connection " + c.index + " before the response to " + r
                                + " was written (stock Kafka answers every request before the refused one or the end"
                                + " of the input)");
                    }
                }
                note("deferred close");
                effect = true;
                FakeBroker.this.close(this, c);
            }
        }

        @Override
        public void discard(Response r) {
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
        public boolean responsesQueued() {
            return !responseQueue.isEmpty();
        }

        @Override
        public void wakeup() {
            boolean wasDirty = dirty;
            wakeups++;
            dirty = true;
            if (budget != null && !delivering) {
                interceptAdmissions(this, wasDirty);
            }
        }

        @Override
        public ResponseKind kindOf(Response response) {
            return response.kind;
        }

        @Override
        public Request requestOf(Response r) {
            if (dequeueing && r.request.conn.index == scenario.faults.requestOfClient()) {
                injectedFaults++;
                note("requestOf fault");
                if (stats.heldResponses() > 0) {
                    note("requestOf fault while kpipe holds responses");
                }
                throw new IllegalStateException("injected fault: reading the request of a response");
            }
            return r.request;
        }

        @Override
        public RequestContext contextOf(Request request) {
            return request.context();
        }

        /** @return kpipe's state of this processor, or {@code null} if it has none */
        ProcessorPipelines<Request, Response> pipelines() {
            return coordinator.processorTable().peek(this);
        }

        @Override
        public String toString() {
            return "processor-" + index;
        }
    }

    private static final Field CONNECTIONS;
    /** {@code ByteBudget.waiters}, its {@code BudgetWaiters.queue} and its entries' fields: the FIFO, read for the
     * checks and the fingerprint. */
    private static final Field BUDGET_WAITERS;

    private static final Field WAITERS_QUEUE;
    private static final Field ENTRY_WAITER;
    private static final Field ENTRY_BYTES;
    /** {@code Reservation.grants}: a delayed admission takes back the grant its callback counted. */
    private static final Field RESERVATION_GRANTS;
    /** {@code ByteBudget.state}: its lowest bit ({@code BudgetLimits.SATURATED}) is the hysteresis state. */
    private static final Field BUDGET_STATE;

    static {
        try {
            CONNECTIONS = PipelineCoordinator.class.getDeclaredField("connections");
            CONNECTIONS.setAccessible(true);
            BUDGET_WAITERS = ByteBudget.class.getDeclaredField("waiters");
            BUDGET_WAITERS.setAccessible(true);
            Class<?> waiters = Class.forName("dev.kpipe.backpressure.BudgetWaiters");
            WAITERS_QUEUE = waiters.getDeclaredField("queue");
            WAITERS_QUEUE.setAccessible(true);
            Class<?> entry = Class.forName(waiters.getName() + "$Entry");
            ENTRY_WAITER = entry.getDeclaredField("waiter");
            ENTRY_WAITER.setAccessible(true);
            ENTRY_BYTES = entry.getDeclaredField("bytes");
            ENTRY_BYTES.setAccessible(true);
            RESERVATION_GRANTS = Reservation.class.getDeclaredField("grants");
            RESERVATION_GRANTS.setAccessible(true);
            BUDGET_STATE = ByteBudget.class.getDeclaredField("state");
            BUDGET_STATE.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Scenario scenario;
    final PipelineStats stats = new PipelineStats();
    final PipelineCoordinator<Request, Response> coordinator;
    /**
     * Where the network layer reports its events: kpipe's {@link #coordinator}, or a plugin given to
     * {@link #FakeBroker(Scenario, NetworkEventListener)} instead (the coordinator is then built but never told anything,
     * and every connection must stay the broker's).
     */
    final NetworkEventListener<Request, Response> listener;
    /** A plugin other than kpipe is installed: every request is expected to be admitted classically. */
    final boolean foreignListener;
    /** What the SPI's test kit around {@link #listener} found wrong in the fake's reporting: checked after every step. */
    private final java.util.List<String> contractViolations = new java.util.ArrayList<>();

    final InflightLimits limits;
    final List<Proc> procs = new ArrayList<>();
    final List<Conn> conns = new ArrayList<>();
    final ArrayDeque<Request> requestQueue = new ArrayDeque<>();
    final Request[] handlers;
    final List<Request> completions = new ArrayList<>();
    /** Verifications the transaction coordinator has not answered yet (KIP-890), in the order they were sent. */
    final List<Request> verifications = new ArrayList<>();
    /** The interceptor misses every callback completion: only the written response can end a deferred dispatch. */
    boolean loseCallbackSignals;
    /**
     * A mutant binding: the dispatch of every request is signalled when {@code KafkaApis.handle} returns, even when its
     * order-defining write comes later (a verified transactional produce or offset commit). Runs must then fail.
     */
    boolean dispatchAtHandleReturn;
    /** Post-verification callbacks queued as {@code CallbackRequest}s, not yet run by a handler. */
    final List<Request> callbacks = new ArrayList<>();

    final List<Request> throttleEnds = new ArrayList<>();
    final List<Response> responses = new ArrayList<>();
    final List<Step> trace = new ArrayList<>();
    private final Map<String, ConnectionPipeline<Request, Response>> owned;
    /** Check the invariants after each step (off while replaying a checked path). */
    boolean checking = true;
    /** How often notable situations occurred, for the property tests' coverage checks. */
    final Map<String, Integer> coverage = new TreeMap<>();

    // ------------------------------------------------ back pressure (budget, storage pressure)

    /** The global byte budget, or {@code null} (the scenario has none: the 3-argument coordinator). */
    final ByteBudget budget;
    /** The storage plugin's saturation flag, flipped by PRESSURE steps. */
    boolean saturated;

    int pressureWindowsLeft;
    /** The signal the coordinator consults (the flag, or BrokerQueuePressure over the fake's queues and the flag). */
    final StoragePressure signal;
    /** Grants whose {@code admitted()} callback has not run yet (delayed admissions), in grant order. */
    final List<ConnectionPipeline<Request, Response>> pendingAdmissions = new ArrayList<>();
    /** Every ConnectionPipeline<Request, Response> seen, and how many of its grants its network thread could see. */
    private final IdentityHashMap<ConnectionPipeline<Request, Response>, Integer> delivered = new IdentityHashMap<>();
    /** Connections waiting for budget and not granted yet, in the order they started waiting. */
    private final List<ConnectionPipeline<Request, Response>> waitOrder = new ArrayList<>();
    /** Connections granted budget, in grant order (connection index). */
    final List<Integer> grantLog = new ArrayList<>();
    /** Connections kpipe unmuted, in order (connection index). */
    final List<Integer> unmuteLog = new ArrayList<>();
    /** Per client, the largest request that can be charged to the budget (not exclusive), in bytes. */
    private final long[] largestChargeable;
    /** Running a delayed admitted() callback: not intercepted. */
    private boolean delivering;

    // ------------------------------------------------ injected faults (Scenario.Faults)

    /** Faults injected so far that kpipe must count in plugin-fault-total (signal, unmute, requestOf). */
    int injectedFaults;
    /** Faults injected into classification so far (the topic id resolver threw). */
    int injectedClassificationFaults;

    private int topicNamesCalls;
    private int signalCalls;
    /** Calls of the storage signal by kpipe in the current processor round. */
    private int signalReadsInRound;

    private int unmuteCalls;
    /** The last call of the storage signal by kpipe threw. */
    private boolean signalFaulted;
    /** The topic id resolver threw during the current onRequestReceived. */
    private boolean classificationFaulted;
    /** Inside onResponseDequeued. */
    private boolean dequeueing;

    // ------------------------------------------------ simulated time

    /** The simulated clock, ns; starts well past 0 (a connection that never wrote counts as quiet). */
    private long nowNanos = 1_000_000_000_000L;
    /** How far a processor's selector poll that times out (TIMEOUT) moves the clock: Kafka's 300 ms. */
    long pollNanos = 300_000_000L;
    /** How far each processor round moves the clock; 0 unless a test of time-based behaviour sets it. */
    long nanosPerRound;
    /** The wake-ups kpipe asked for (ns from then), in order. */
    final List<Long> wakeups = new ArrayList<>();

    /** @return the simulated clock, ns (the coordinator's and the budget's {@code Ticker}) */
    long nanos() {
        return nowNanos;
    }

    /** Moves the simulated clock. */
    void advance(long nanos) {
        nowNanos += nanos;
    }

    // ------------------------------------------------ kpipe.enable flipped at runtime

    /** CONFIG steps left. */
    int enableFlipsLeft;
    /** kpipe was disabled at least once: a connection may drain with no request held. */
    boolean everDisabled;

    FakeBroker(Scenario scenario) {
        this(scenario, null);
    }

    /**
     * @param scenario the clients and the broker's settings
     * @param plugin a listener installed instead of kpipe's coordinator, or {@code null} for kpipe; it is told
     *     {@code onInstalled} and {@code onBrokerServices} as a broker would, then every event
     */
    @SuppressWarnings("unchecked")
    FakeBroker(Scenario scenario, NetworkEventListener<Request, Response> plugin) {
        this.scenario = scenario;
        this.limits = new InflightLimits(scenario.maxInflight, scenario.maxInflightBytes);
        Scenario.BackPressure bp = scenario.backPressure;
        this.budget = bp.budget() > 0 ? new ByteBudget(bp.budget(), bp.budget() * 9 / 10, this::nanos) : null;
        // Simulated time (steps replay identically: the explorer replays paths): the clock moves only when a
        // processor's poll times out (TIMEOUT) and, if a test says so, by nanosPerRound per processor round. The
        // 20 ms idle-reservation threshold and the 100 ms re-authentication quiet period keep their real values.
        // Wake-ups are recorded; tests drive rounds with TIMEOUT steps.
        // No budget configured: the coordinator gets an unbounded one (the fake's checks of the budget then skip).
        this.coordinator = new PipelineCoordinator<>(
                new RequestClassifier(KafkaRequests.policy()),
                limits,
                budget != null ? budget : ByteBudget.unbounded(this::nanos),
                stats,
                this::nanos,
                (processor, delayNanos) -> wakeups.add(delayNanos));
        // Every event reaches the plugin through the SPI's test kit: the fake's events must keep the SPI's contract.
        this.listener = new ContractCheck<>(plugin != null ? plugin : coordinator, contractViolations::add);
        this.foreignListener = plugin != null;
        listener.onInstalled(new BrokerCapabilities(
                "fake",
                scenario.transactions
                        ? java.util.EnumSet.of(
                                org.apache.kafka.common.protocol.ApiKeys.PRODUCE,
                                org.apache.kafka.common.protocol.ApiKeys.TXN_OFFSET_COMMIT)
                        : java.util.EnumSet.noneOf(org.apache.kafka.common.protocol.ApiKeys.class)));
        Scenario.Faults faults = scenario.faults;
        TopicNames topicNames = id -> {
            if (faults.topicNamesEvery() > 0 && ++topicNamesCalls % faults.topicNamesEvery() == 0) {
                injectedClassificationFaults++;
                classificationFaulted = true;
                note("classification fault");
                throw new IllegalStateException("injected fault: topic id resolver");
            }
            return KafkaRequests.TOPIC_NAMES.topicName(id);
        };
        this.pressureWindowsLeft = bp.pressureWindows();
        this.enableFlipsLeft = scenario.enableFlips;
        StoragePressure flag = faultySignal(global(() -> saturated));
        if (bp.queueCapacity() > 0) {
            BrokerLoad load = new BrokerLoad() {
                @Override
                public int requestQueueSize() {
                    return requestQueue.size();
                }

                @Override
                public int requestQueueCapacity() {
                    return bp.queueCapacity();
                }

                @Override
                public int delayedProduceRequests() {
                    return (int) completions.stream()
                            .filter(r -> r.spec.kind().name().startsWith("PRODUCE"))
                            .count();
                }
            };
            coordinator.pressureFactory(l -> new BrokerQueuePressure(l, bp.maxDelayedProduce(), flag));
            listener.onBrokerServices(new BrokerServices(topicNames, load));
            this.signal = new BrokerQueuePressure(load, bp.maxDelayedProduce(), global(() -> saturated));
        } else if (bp.pressureWindows() > 0) {
            listener.onBrokerServices(new BrokerServices(topicNames, null));
            coordinator.pressure(flag);
            this.signal = global(() -> saturated);
        } else {
            listener.onBrokerServices(new BrokerServices(topicNames, null));
            if (faults.signalEvery() > 0) {
                coordinator.pressure(flag);
            }
            this.signal = StoragePressure.NONE;
        }
        if (foreignListener) {
            listener.onBrokerServices(new BrokerServices(topicNames, null));
        }
        this.largestChargeable = new long[scenario.clients.size()];
        for (int c = 0; c < largestChargeable.length; c++) {
            List<Scenario.Req> reqs = scenario.clients.get(c).requests();
            for (int i = 0; i < reqs.size(); i++) {
                if (!scenario.exclusive(reqs.get(i).kind())) {
                    largestChargeable[c] = Math.max(largestChargeable[c], scenario.size(c, i));
                }
            }
        }
        try {
            owned = ((ConnectionTable) CONNECTIONS.get(coordinator)).asMap();
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
                conn.requests.add(new Request(
                        conn, i, specs.get(i), scenario.parsed.get(c).get(i)));
            }
            conns.add(conn);
            p.conns.add(conn);
        }
        handlers = new Request[scenario.handlers];
    }

    /** @return the storage plugin's flag as kpipe sees it: throwing on every n-th call if the scenario says so */
    private StoragePressure faultySignal(StoragePressure inner) {
        return global(() -> {
            signalReadsInRound++;
            if (scenario.faults.signalEvery() > 0 && ++signalCalls % scenario.faults.signalEvery() == 0) {
                injectedFaults++;
                signalFaulted = true;
                note("signal fault");
                throw new IllegalStateException("injected fault: storage pressure signal");
            }
            signalFaulted = false;
            return inner.saturated();
        });
    }

    /** @return a source that reports the broker saturated while {@code saturated} says so, and no topic */
    static StoragePressure global(java.util.function.BooleanSupplier saturated) {
        return new StoragePressure() {
            @Override
            public boolean saturated() {
                return saturated.getAsBoolean();
            }
        };
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
            if (c.clientActive()
                    && c.written < c.requests.size()
                    && c.clientInflight() < c.client.depth()
                    && c.reauthPending == null) {
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
        for (int k = 0; k < verifications.size(); k++) {
            steps.add(new Step(StepType.VERIFIED, k));
        }
        for (int k = 0; free > 0 && k < callbacks.size(); k++) {
            steps.add(new Step(StepType.CALLBACK, k));
        }
        for (int k = 0; k < throttleEnds.size(); k++) {
            steps.add(new Step(StepType.END_THROTTLE, k));
        }
        for (Conn c : conns) {
            if (c.open && c.send != null && !c.sendDone && !c.authenticating) {
                steps.add(new Step(StepType.SEND_DONE, c.index));
            }
            if (c.open && c.authenticating) {
                steps.add(new Step(StepType.REAUTH_DONE, c.index));
            }
        }
        if (allowDisconnect) {
            for (Conn c : conns) {
                if (c.client.mayDisconnect() && c.clientActive()) {
                    steps.add(new Step(StepType.DISCONNECT, c.index));
                }
            }
        }
        if (saturated) {
            steps.add(new Step(StepType.PRESSURE, 0));
        } else if (pressureWindowsLeft > 0) {
            steps.add(new Step(StepType.PRESSURE, 1));
        }
        for (int k = 0; k < pendingAdmissions.size(); k++) {
            steps.add(new Step(StepType.ADMIT, k));
        }
        if (enableFlipsLeft > 0) {
            steps.add(new Step(StepType.CONFIG, coordinator.enabled() ? 0 : 1));
        }
        for (Proc p : procs) {
            ProcessorPipelines<Request, Response> pp = p.pipelines();
            // the poll times out (Kafka's processor polls for at most 300 ms): a round re-evaluates what waits on time
            if (p.phase == Phase.ROUND_ENTER
                    && !p.dirty
                    && pp != null
                    && ((pp.pressureWaits() && !signal.saturated()) || pp.quietWaits())) {
                steps.add(new Step(StepType.TIMEOUT, p.index));
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
                Request r = c.requests.get(c.written++);
                c.inbound.add(r);
                if (r.spec.kind() == Scenario.Kind.SASL_REAUTH) {
                    c.reauthPending = r;
                }
                c.proc.dirty = true;
            }
            case HANDLE -> handle(step.arg());
            case RETURN -> {
                Request r = handlers[step.arg()];
                handlers[step.arg()] = null;
                r.returned = true;
                r.conn.dispatchPhase.remove(r);
                if (scenario.transactions && !r.appended && !dispatchAtHandleReturn) {
                    // The interceptor's two-party hand-off: handle returned first; the callback completes it.
                    note("dispatch deferred");
                    listen("onDispatchDeferred", () -> {
                        listener.onDispatchDeferred(r, r.context());
                        return null;
                    });
                } else {
                    if (r.spec.kind().verified()) {
                        note(r.appended ? "appended before handle returned" : "dispatched before append");
                    }
                    listen("onRequestDispatched", () -> {
                        listener.onRequestDispatched(r, r.context());
                        return null;
                    });
                }
            }
            case VERIFIED -> {
                Request r = verifications.remove(step.arg());
                if (r.spec.kind() == Scenario.Kind.TXN_OFFSET_COMMIT_VERIFIED) {
                    coordinatorWrite(r);
                } else {
                    callbacks.add(r);
                }
            }
            case CALLBACK -> runCallback(callbacks.remove(step.arg()));
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
            case PRESSURE -> {
                saturated = step.arg() == 1;
                if (saturated) {
                    pressureWindowsLeft--;
                }
            }
            case ADMIT -> {
                ConnectionPipeline<Request, Response> cp = pendingAdmissions.remove(step.arg());
                delivered.merge(cp, 1, Integer::sum);
                delivering = true;
                try {
                    cp.admitted();
                } finally {
                    delivering = false;
                }
            }
            case TIMEOUT -> {
                advance(pollNanos);
                procs.get(step.arg()).dirty = true;
            }
            case REAUTH_DONE -> {
                Conn c = conns.get(step.arg());
                c.authenticating = false;
                c.reauthPending = null;
                c.proc.dirty = true;
            }
            case CONFIG -> {
                boolean enable = step.arg() == 1;
                enableFlipsLeft--;
                if (!enable) {
                    everDisabled = true;
                    note("disabled");
                    if (!owned.isEmpty()) {
                        note("disabled with pipelined connections");
                    }
                }
                listen("enabled", () -> {
                    coordinator.enabled(enable);
                    return null;
                });
            }
        }
        if (failure != null) {
            throw failure;
        }
        if (budget != null) {
            syncWaitOrder();
        }
        if (checking) {
            checkInvariants();
        }
    }

    // ------------------------------------------------------------------ the byte budget's waiters

    /** @return the budget's FIFO: waiters and their wanted bytes, head first */
    List<Map.Entry<ByteBudget.Waiter, Long>> budgetQueue() {
        List<Map.Entry<ByteBudget.Waiter, Long>> out = new ArrayList<>();
        synchronized (budget) {
            try {
                for (Object e : (ArrayDeque<?>) WAITERS_QUEUE.get(BUDGET_WAITERS.get(budget))) {
                    out.add(Map.entry((ByteBudget.Waiter) ENTRY_WAITER.get(e), (Long) ENTRY_BYTES.get(e)));
                }
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
        return out;
    }

    private static boolean containsIdentity(List<?> list, Object o) {
        for (Object x : list) {
            if (x == o) {
                return true;
            }
        }
        return false;
    }

    /**
     * Keeps {@link #waitOrder}: forgets connections no longer waiting (they took their grant or were cancelled);
     * appends, in the budget's queue order, those that started waiting since.
     */
    private void syncWaitOrder() {
        for (ConnectionPipeline<Request, Response> cp : owned.values()) {
            delivered.putIfAbsent(cp, 0);
        }
        waitOrder.removeIf(cp -> !Internals.reservation(cp).waiting());
        if (budget.waiting() == 0) {
            return;
        }
        for (Map.Entry<ByteBudget.Waiter, Long> e : budgetQueue()) {
            ConnectionPipeline<Request, Response> cp = (ConnectionPipeline<Request, Response>) e.getKey();
            if (!containsIdentity(waitOrder, cp)) {
                waitOrder.add(cp);
                note("budget wait");
                if (waitOrder.size() >= 2) {
                    note("two budget waiters");
                }
            }
        }
    }

    /**
     * Called on every wakeup: a wakeup that follows a new grant is the end of {@code ConnectionPipeline.admitted()}
     * (it counts the grant, queues the connection for its network thread, then wakes the processor). Checks that
     * the budget grants in FIFO order; with delayed admissions, takes the callback's effects back (the grant count,
     * the queued connection, the wakeup) and offers it as an ADMIT step.
     */
    private void interceptAdmissions(Proc p, boolean wasDirty) {
        syncWaitOrder();
        for (ConnectionPipeline<Request, Response> cp : new ArrayList<>(delivered.keySet())) {
            int fresh = Internals.reservation(cp).grants() - delivered.get(cp);
            if (fresh <= 0) {
                continue;
            }
            if (fresh > 1) {
                fail("connection " + cp.id() + " was granted " + fresh + " times at once");
            }
            if (cp.processor() != p) {
                fail("admitted() of " + cp.id() + " woke processor " + p.index + ", not its own");
            }
            checkFifoGrant(cp);
            grantLog.add(conn(cp.id()).index);
            note("budget grant");
            if (scenario.backPressure.delayedAdmissions()) {
                ungrant(cp);
                if (!wasDirty) {
                    // The processor was idle, so nothing was signalled before: the callback listed the connection.
                    unlist(Internals.signalled(coordinator.processorTable().of(cp.processor())), cp);
                }
                // else an earlier signal may have listed it (a connection is listed once for all its signals): left
                // listed, it is evaluated, and without its grant it keeps waiting
                p.dirty = wasDirty;
                pendingAdmissions.add(cp);
                note("admission callback delayed");
            } else {
                delivered.put(cp, delivered.get(cp) + 1);
            }
        }
    }

    /** @return {@code ByteBudget}'s saturation: the hysteresis state, read for the model's checks and the fingerprint */
    private boolean budgetSaturated() {
        synchronized (budget) {
            try {
                return (BUDGET_STATE.getLong(budget) & 1L) != 0;
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Takes a connection out of a processor's signals, keeping the others in their order. */
    private static void unlist(
            SignalQueue<ConnectionPipeline<Request, Response>> signals, ConnectionPipeline<Request, Response> cp) {
        List<ConnectionPipeline<Request, Response>> rest = new ArrayList<>();
        ConnectionPipeline<Request, Response> c;
        while ((c = signals.poll()) != null) {
            if (c != cp) {
                rest.add(c);
            }
        }
        rest.forEach(signals::add);
    }

    /** Takes back the grant that {@code admitted()} counted (the callback is delayed: an ADMIT step replays it). */
    private static void ungrant(ConnectionPipeline<Request, Response> cp) {
        try {
            ((AtomicInteger) RESERVATION_GRANTS.get(Internals.reservation(cp))).decrementAndGet();
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    /** The budget grants the connection that started waiting first, of those still waiting. */
    private void checkFifoGrant(ConnectionPipeline<Request, Response> granted) {
        for (ConnectionPipeline<Request, Response> w : waitOrder) {
            if (w == granted) {
                break;
            }
            if (Internals.reservation(w).waiting()
                    && !containsIdentity(pendingAdmissions, w)
                    && Internals.reservation(w).grants()
                            == Internals.reservation(w).grantsConsumed()) {
                fail("FIFO broken: connection " + granted.id() + " was granted budget before " + w.id()
                        + ", which started waiting earlier (wait order "
                        + waitOrder.stream().map(x -> x.id()).toList() + ")");
            }
        }
        waitOrder.removeIf(w -> w == granted);
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
        for (Request earlier : r.conn.requests) {
            if (earlier.index < r.index && earlier.verifying) {
                fail("connection " + r.conn.index + ": " + r + " dispatched before the append of " + earlier
                        + " (a verified transactional produce: KIP-890)");
            }
        }
        if (r.spec.kind().verified()) {
            // ReplicaManager.handleProduceAppend (or the coordinator runtime's partition writer):
            // AddPartitionsToTxnManager.addOrVerifyTransaction; the write runs in the post-verification callback,
            // later: on some handler (produce), or on the coordinator's thread (TXN_OFFSET_COMMIT).
            r.verifying = true;
            verifications.add(r);
            if (verifications.stream().filter(v -> v.conn == r.conn).count() > 1) {
                fail("two verifications of connection " + r.conn.index + " outstanding (the coordinator would evict "
                        + "one with NETWORK_EXCEPTION)");
            }
            return;
        }
        r.appended = true;
        // KafkaApis.handle: the local work happens now; the response now or later.
        if (r.spec.delayed()) {
            completions.add(r);
        } else {
            respond(r);
        }
    }

    /**
     * A handler runs the post-verification callback of a verified transactional produce: it appends (or answers the
     * verification's error), sends the response now or leaves it to the purgatory, and the handler's {@code finally}
     * sets {@code callbackRequestCompleteTimeNanos}: the interceptor signals the dispatch if handle already returned.
     */
    private void runCallback(Request r) {
        r.appended = true;
        r.verifying = false;
        if (r.spec.delayed()) {
            completions.add(r);
        } else {
            respond(r);
        }
        if (dispatchAtHandleReturn) {
            return; // the mutant signalled the dispatch at handle-return already
        }
        if (scenario.transactions && r.returned && loseCallbackSignals) {
            note("callback signal lost");
        } else if (scenario.transactions && r.returned) {
            note("append after handle returned");
            listen("onRequestDispatched", () -> {
                listener.onRequestDispatched(r, r.context());
                return null;
            });
        }
    }

    /**
     * The transaction coordinator answered the verification of a TXN_OFFSET_COMMIT on KIP-848's coordinator runtime:
     * the verification callback, on the coordinator's own thread, enqueues the write into the runtime (its order is
     * fixed now) and returns; the response follows once the write is committed (now or later). If handle returned
     * already, the interceptor signals the dispatch when the callback returns.
     */
    private void coordinatorWrite(Request r) {
        r.appended = true;
        r.verifying = false;
        if (r.spec.delayed()) {
            completions.add(r);
        } else {
            respond(r);
        }
        if (scenario.transactions && r.returned && !loseCallbackSignals && !dispatchAtHandleReturn) {
            note("write enqueued after handle returned");
            listen("onRequestDispatched", () -> {
                listener.onRequestDispatched(r, r.context());
                return null;
            });
        } else if (scenario.transactions && r.returned) {
            note("callback signal lost");
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
                    + " (" + r.request + ") but expected "
                    + (expected == null ? "none" : expected.correlationId() + " (" + expected + ")"));
        }
        c.received.add(r.request);
    }

    private void queueForHandlers(Request r) {
        for (Request earlier : r.conn.dispatchPhase) {
            // Stock Kafka too reads the next request once a classic request's response is written, while
            // its handler may not have returned yet (a held request forwarded on downgrade is classic).
            boolean stockClassic = (earlier.admission == Admission.CLASSIC || earlier.forwarded) && earlier.settled;
            // kpipe ends a dispatch phase when it dequeues the response before handle returns: the broker answers
            // only after the request's work (a produce's append) is done.
            boolean answered = earlier.responseDequeued && earlier.appended;
            if (!stockClassic && !answered) {
                fail("two requests of connection " + r.conn.index + " in the dispatch phase: " + earlier + " ("
                        + earlier.state() + ") and " + r);
            }
        }
        r.conn.dispatchPhase.add(r);
        r.queued = true;
        requestQueue.add(r);
    }

    // ------------------------------------------------------------------ the network thread

    /** One processor round; kpipe reads the storage signal at most once in it, however many connections it evaluates. */
    private void round(Proc p) {
        signalReadsInRound = 0;
        listen("onProcessorRound", () -> {
            listener.onProcessorRound(p);
            return null;
        });
        if (signalReadsInRound > 1) {
            fail("kpipe read the storage signal " + signalReadsInRound + " times in one processor round");
        }
    }

    private void micro(Proc p) {
        switch (p.phase) {
            case ROUND_ENTER -> {
                p.dirty = false;
                p.effect = false;
                advance(nanosPerRound);
                round(p);
                p.phase = Phase.DEQUEUE;
            }
            case DEQUEUE -> {
                Response in = p.responseQueue.poll();
                if (in != null) {
                    p.effect = true;
                    if (!in.kind.isControl()) {
                        in.request.responseDequeued = true;
                    }
                }
                dequeueing = true;
                Object out;
                try {
                    out = listen("onResponseReady", () -> listener.onResponseReady(p, in));
                } finally {
                    dequeueing = false;
                }
                if (out == null) {
                    p.phase = Phase.ROUND_EXIT;
                } else {
                    p.effect = true;
                    process(p, (Response) out);
                }
            }
            case ROUND_EXIT -> {
                round(p);
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
                    ProcessorPipelines<Request, Response> pp = p.pipelines();
                    if (pp != null && !pp.nothingQueued()) {
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
                        fail("KafkaChannel.setSend would throw: a send is already in progress on connection " + c.index
                                + " (" + c.send + ") when " + r + " is sent");
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
            if (c.authenticating) {
                continue; // KafkaChannel not ready: the selector runs the authenticator, reads and writes nothing else
            }
            if (c.send != null && c.sendDone) {
                p.completedSends.add(c.send);
                c.send = null;
                c.sendDone = false;
                p.effect = true;
            }
            if (!c.channel.isMuted() && !c.inbound.isEmpty()) {
                if (c.inbound.peek().spec.kind() == Scenario.Kind.END) {
                    inputEnded(p, c, c.inbound.poll());
                    continue;
                }
                p.completedReceives.add(c.inbound.poll());
                p.effect = true;
            }
        }
    }

    /**
     * {@code Selector.attemptRead} of a connection whose input ended (end of stream, a refused frame, a failed read):
     * {@code KafkaChannel.read} throws, and its advice offers the close to kpipe first. Taken over, the channel stays
     * open, muted by kpipe, and kpipe closes it once every earlier response is written; otherwise the selector closes
     * it ({@code CloseMode.GRACEFUL} with nothing pending: closed now, reported as disconnected).
     */
    private void inputEnded(Proc p, Conn c, Request end) {
        ConnectionPipeline<Request, Response> cp = owned.get(c.id);
        end.read = true;
        c.inputEnded = end;
        p.effect = true;
        note(cp == null ? "input ended on a classic connection" : "input ended on a pipelined connection");
        boolean deferred = c.pluginOwned
                && listen("onInputEnded", () -> listener.onInputEnded(p, c.id, new java.io.EOFException()));
        if (deferred) {
            if (cp == null || cp.inflight().isEmpty()) {
                fail("kpipe took over the close of connection " + c.index + " with nothing to answer first");
            }
            if (!c.channel.isMuted()) {
                fail("kpipe took over the close of connection " + c.index + " after its input ended but left it"
                        + " readable: the selector would read the end again at every poll");
            }
            c.closeDeferred = true;
            note("close deferred after the input ended");
            if (cp != null && cp.inflight().size() > 1) {
                note("input ended with several requests unanswered");
            }
        } else {
            if (cp != null && !cp.inflight().isEmpty()) {
                fail("kpipe let the broker close connection " + c.index + " with "
                        + cp.inflight().size() + " earlier requests unanswered after its input ended");
            }
            closeChannel(c);
            c.closedByBroker = true;
            p.disconnected.add(c);
        }
    }

    /** {@code Processor.processCompletedReceives}, one receive. */
    private void receive(Proc p, Request r) {
        Conn c = r.conn;
        ConnectionPipeline<Request, Response> cp = owned.get(c.id);
        if (cp != null) {
            if (cp.awaitingDispatch()) {
                fail("connection " + c.index + " read while a request awaits dispatch: " + r);
            }
            if (cp.state().draining()) {
                fail("connection " + c.index + " read while draining: " + r);
            }
            if (cp.throttled()) {
                fail("connection " + c.index + " read while throttled: " + r);
            }
            if (!coordinator
                    .limits()
                    .admitsAnother(cp.inflight().size(), cp.inflight().bytes())) {
                fail("connection " + c.index + " read beyond the in-flight limit ("
                        + cp.inflight().size() + " requests, " + cp.inflight().bytes() + " bytes): " + r);
            }
            if (budget != null && Internals.reservation(cp).reserved() <= 0) {
                fail("connection " + c.index + " read without a budget reservation: " + r);
            }
            if (budget != null
                    && Internals.reservation(cp).reserved() < scenario.size(c.index, r.index)
                    && !scenario.exclusive(r.spec.kind())) {
                note(
                        scenario.size(c.index, r.index) > budget.capacity()
                                ? "oversize read"
                                : "read above its reservation");
            }
        }
        r.read = true;
        if (r.spec.kind() == Scenario.Kind.SASL_REAUTH) {
            receiveReauthentication(p, c, cp, r);
            return;
        }
        if (r.spec.kind() == Scenario.Kind.BAD) {
            // Processor.processCompletedReceives: the request does not parse; processChannelException, then
            // close(id), whose hook offers the close to kpipe first (the receive is still a completed receive).
            note(cp == null ? "refused request on a classic connection" : "refused request on a pipelined connection");
            c.rejected = r;
            p.effect = true;
            boolean deferred = c.pluginOwned && listen("onRequestRejected", () -> listener.onRequestRejected(p, c.id));
            if (deferred) {
                if (cp == null || cp.inflight().isEmpty()) {
                    fail("kpipe took over the close of connection " + c.index + " with nothing to answer first");
                }
                c.closeDeferred = true;
                note("close deferred");
            } else {
                if (cp != null && !cp.inflight().isEmpty()) {
                    fail("kpipe let the broker close connection " + c.index + " with "
                            + cp.inflight().size() + " earlier requests unanswered");
                }
                close(p, c);
            }
            return;
        }
        int size = scenario.size(c.index, r.index);
        // An upgrade charges the request already read: only if the budget admits it now, overtaking no waiter.
        boolean budgetAdmitsUpgrade = budget == null
                || (budget.waiting() == 0
                        && !budgetSaturated()
                        && (budget.used() == 0 || budget.used() + budget.clamp(size) <= budget.capacity()));
        classificationFaulted = false;
        Admission a = listen("onRequestRead", () -> listener.onRequestRead(p, r, r.context(), r.body(), size));
        r.admission = a;
        c.pluginOwned = a != Admission.CLASSIC;
        Scenario.Kind kind = r.spec.kind();
        boolean exclusive = scenario.exclusive(kind) || classificationFaulted;
        Admission expected;
        if (foreignListener) {
            expected = Admission.CLASSIC; // a plugin that only observes leaves every connection the broker's
        } else if (!coordinator.enabled()) {
            // no upgrade; a request read on a pipelined connection before its drain started is exclusive
            if (cp != null) {
                note("read after disable, before the drain");
            }
            expected = cp == null || (cp.inflight().isEmpty() && !cp.throttled()) ? Admission.CLASSIC : Admission.HELD;
        } else if (cp == null) {
            boolean upgrades = scenario.upgrades(kind) && !classificationFaulted;
            expected = upgrades && budgetAdmitsUpgrade ? Admission.PIPELINED : Admission.CLASSIC;
            if (upgrades && !budgetAdmitsUpgrade) {
                note("upgrade deferred: no budget room");
            }
        } else if (exclusive) {
            expected = cp.inflight().isEmpty() && !cp.throttled() ? Admission.CLASSIC : Admission.HELD;
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

    /**
     * {@code Processor.processCompletedReceives} for a SASL_HANDSHAKE on an authenticated channel: {@code
     * KafkaChannel.maybeBeginServerReauthentication} (its advice asks kpipe first); no mute, no queueing.
     */
    private void receiveReauthentication(Proc p, Conn c, ConnectionPipeline<Request, Response> cp, Request r) {
        boolean recentlyWritten =
                cp != null && nanos() - cp.lastWrittenNanos() < PipelineCoordinator.REAUTHENTICATION_QUIET_NANOS;
        boolean deferred = listen("onReauthentication", () -> listener.onReauthentication(p, c.id, r));
        c.pluginOwned = deferred;
        boolean outstanding =
                cp != null && (!cp.inflight().isEmpty() || cp.awaitingDispatch() || cp.throttled() || recentlyWritten);
        if (deferred != outstanding) {
            fail("re-authentication of " + r + (deferred ? " deferred" : " not deferred") + " with "
                    + (cp == null ? "a classic connection" : cp.toString()));
        }
        p.effect = true;
        if (deferred) {
            r.reauthDeferred = true;
            note("re-authentication deferred");
        } else {
            note(
                    cp != null
                            ? "re-authentication downgrades without drain"
                            : "re-authentication on a classic connection");
            beginReauthentication(c, r);
        }
    }

    /**
     * {@code SaslServerAuthenticator.reauthenticate}: answers the handshake straight to the socket. In stock Kafka
     * nothing else of the connection is on the wire then: every earlier response is written, none is in progress,
     * the channel is unmuted and Kafka's own.
     */
    void beginReauthentication(Conn c, Request r) {
        if (owned.containsKey(c.id)) {
            fail("re-authentication of " + r + " begins while kpipe owns connection " + c.index + ": "
                    + owned.get(c.id));
        }
        if (c.channel.state != FakeKafkaChannel.State.NOT_MUTED) {
            fail("re-authentication of " + r + " begins on a channel in Kafka state " + c.channel.state);
        }
        if (c.send != null) {
            fail("re-authentication of " + r + " begins while response " + c.send + " is being written: its SASL"
                    + " response would be written into the middle of it");
        }
        Request expected = c.nextExpectedResponse();
        if (expected != r) {
            fail("the SASL handshake response of " + r + " would overtake the response to " + expected);
        }
        r.reauthBegun = true;
        r.handled = true;
        r.responded = true;
        r.settled = true;
        c.received.add(r);
        c.authenticating = true;
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
            c.pluginOwned = false;
            listen("onConnectionClosed", () -> {
                listener.onConnectionClosed(p, c.id);
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
        c.pluginOwned = false;
        if (c.open) {
            // the binding reports a close only while the selector has the channel: one the selector closed in this
            // poll is among its disconnections (processDisconnected reports it)
            listen("onConnectionClosed", () -> {
                listener.onConnectionClosed(p, c.id);
                return null;
            });
        }
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
        ConnectionPipeline<Request, Response> cp = owned.get(c.id);
        if (cp == null) {
            return;
        }
        note("close of a pipelined connection");
        if (cp.held() != null) {
            note(
                    cp.state() == ConnectionState.DRAINING_REAUTHENTICATION
                            ? "close with a held re-authentication"
                            : "close with a held request");
        }
        if (cp.inflight().heldResponses() > 0) {
            note("close with parked responses");
        }
        if (cp.throttled()) {
            note("close while throttled");
        }
        if (Internals.reservation(cp).waiting()) {
            boolean granted = containsIdentity(pendingAdmissions, cp)
                    || Internals.reservation(cp).grants()
                            > Internals.reservation(cp).grantsConsumed();
            note(granted ? "close while granted, grant not consumed" : "close while waiting for budget");
            if (containsIdentity(pendingAdmissions, cp)) {
                note("close before the admitted() callback ran");
            }
        } else if (Internals.reservation(cp).reserved() > 0) {
            note("close with a reservation");
        }
        if (cp.pressureBlocked()) {
            note("close while pressure-blocked");
        }
    }

    void note(String situation) {
        coverage.merge(situation, 1, Integer::sum);
    }

    private void closeChannel(Conn c) {
        c.open = false;
        c.closing = false;
        c.authenticating = false;
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
        listen("onResponseWritten", () -> {
            listener.onResponseWritten(p, r);
            return null;
        });
    }

    /**
     * {@code Processor.handleChannelMuteEvent}, with the binding's advice: Kafka's mute state machine does not see the
     * events of a connection kpipe owns; its throttle windows are reported instead.
     */
    private void muteEvent(Proc p, Conn c, MuteEvent event) {
        ConnectionPipeline<Request, Response> cp = owned.get(c.id);
        if (cp != null && event == MuteEvent.THROTTLE_STARTED) {
            note(cp.state().draining() ? "throttle starts while draining" : "throttle starts");
        }
        if (c.pluginOwned) {
            if (event == MuteEvent.THROTTLE_STARTED || event == MuteEvent.THROTTLE_ENDED) {
                listen("onThrottle", () -> {
                    if (event == MuteEvent.THROTTLE_STARTED) {
                        listener.onThrottleStarted(p, c.id);
                    } else {
                        listener.onThrottleEnded(p, c.id);
                    }
                    return null;
                });
            }
            return;
        }
        if (c.open) {
            try {
                c.channel.handleChannelMuteEvent(event);
            } catch (IllegalStateException e) {
                fail("KafkaChannel of connection " + c.index + " threw: " + e.getMessage());
            }
        }
    }

    /**
     * {@code Processor.tryUnmuteChannel}, with the binding's advice: a connection kpipe owns stays as kpipe keeps it; a
     * connection Kafka would unmute from its plain MUTED state is offered to kpipe first.
     */
    private void tryUnmute(Proc p, Conn c) {
        if (c.pluginOwned || !c.open) {
            return;
        }
        if (c.channel.state == FakeKafkaChannel.State.MUTED && listen("onUnmute", () -> listener.onUnmute(p, c.id))) {
            c.pluginOwned = true;
            note("taken over at unmute");
            return;
        }
        c.channel.maybeUnmute();
    }

    private <T> T listen(String what, Supplier<T> call) {
        try {
            T result = call.get();
            if (budget != null) {
                // waits that started in this call are ordered before grants that later calls of this step make
                syncWaitOrder();
            }
            return result;
        } catch (RuntimeException e) {
            AssertionError error = new AssertionError(describe("the listener threw from " + what + ": " + e));
            error.initCause(e);
            throw error;
        }
    }

    // ------------------------------------------------------------------ invariants

    /**
     * After every step: the byte budget's invariants hold ({@code ByteBudget.invariantViolation()}: no waiter left
     * queued while its reservation fits); each connection's own invariants hold
     * ({@link ConnectionPipeline#invariantViolation()}, on the production class); kpipe's bookkeeping matches the broker (a connection kpipe owns is only ever
     * NOT_MUTED or MUTED in Kafka's state machine, and muted exactly when kpipe thinks so); at most
     * {@code maxInflight} requests in flight per connection; the gauges equal what they count; no
     * plugin fault or classification fallback. The other invariants are checked where they can break:
     * the KafkaChannel never throws, responses reach each client in arrival order, one send per
     * connection, the dispatch phase and dispatch order per connection, no read of a connection kpipe
     * keeps muted, every response handed to the broker or discarded once.
     */
    void checkInvariants() {
        if (!contractViolations.isEmpty()) {
            fail("the fake broker broke the SPI's contract (ContractCheck): " + contractViolations);
        }
        int inflight = 0;
        int heldRequests = 0;
        int heldResponses = 0;
        int throttled = 0;
        String budgetViolation = budget == null ? null : budget.invariantViolation();
        if (budgetViolation != null) {
            fail("byte budget: " + budgetViolation);
        }
        for (ConnectionPipeline<Request, Response> cp : owned.values()) {
            Conn c = conn(cp.id());
            String violation = ConnectionInvariants.violation(cp);
            if (violation != null) {
                fail("connection " + c.index + ": " + violation + ": " + cp);
            }
            if (c.open && cp.state() != ConnectionState.CLOSED) {
                if (c.channel.state != FakeKafkaChannel.State.NOT_MUTED
                        && c.channel.state != FakeKafkaChannel.State.MUTED) {
                    fail("connection " + c.index + " owned by kpipe is in Kafka state " + c.channel.state);
                }
                if (cp.muted() != c.channel.isMuted()) {
                    fail("kpipe thinks connection " + c.index + " is " + (cp.muted() ? "muted" : "unmuted")
                            + " but its channel is " + c.channel.state);
                }
            }
            if (cp.inflight().size()
                    > Math.max(scenario.maxInflight, coordinator.limits().maxRequests())) {
                fail("connection " + c.index + " has " + cp.inflight().size() + " requests in flight");
            }
            if (!coordinator
                    .limits()
                    .admitsAnother(cp.inflight().size(), cp.inflight().bytes())) {
                note("in-flight limit reached");
            }
            if (cp.state().draining() && cp.inflight().isEmpty() && cp.throttled()) {
                note("drained but throttled");
            }
            boolean drainingWithNothingHeld = cp.state() == ConnectionState.DRAINING_DISABLED;
            if (drainingWithNothingHeld && !everDisabled) {
                fail("connection " + c.index + " is " + cp.state() + " but kpipe was never disabled");
            }
            if (c.authenticating && c.open) {
                fail("kpipe owns connection " + c.index + " while it re-authenticates");
            }
            if (drainingWithNothingHeld) {
                note("drain after disable");
            }
            inflight += cp.inflight().size();
            heldRequests += cp.held() != null ? 1 : 0;
            throttled += cp.throttled() ? 1 : 0;
            int[] held = {0};
            boolean[] head = {true};
            boolean sending = cp.inflight().sendOutstanding();
            cp.inflight().forEach((request, response) -> {
                if (response != null && !(head[0] && sending)) {
                    held[0]++;
                }
                head[0] = false;
            });
            heldResponses += held[0];
        }
        if (budget != null) {
            checkBudget();
        }
        if (saturated) {
            for (Proc p : procs) {
                ProcessorPipelines<Request, Response> pp = p.pipelines();
                if (pp != null && !Internals.pressureBlocked(pp).isEmpty()) {
                    note("pressure-blocked");
                }
            }
        }
        gauge("pipelinedConnections", stats.pipelinedConnections(), owned.size());
        gauge("inflightRequests", stats.inflightRequests(), inflight);
        gauge("heldRequests", stats.heldRequests(), heldRequests);
        gauge("heldResponses", stats.heldResponses(), heldResponses);
        gauge("throttledConnections", stats.throttledConnections(), throttled);
        if (stats.pluginFaults() != injectedFaults) {
            fail("plugin faults: " + stats.pluginFaults() + ", injected: " + injectedFaults);
        }
        if (stats.classificationFallbacks() != injectedClassificationFaults) {
            fail("classification fallbacks: " + stats.classificationFallbacks() + ", injected: "
                    + injectedClassificationFaults);
        }
        // every pipelined request waits for its dispatch once; every wait for the budget is one entry of its queue
        if (stats.waits(WaitReason.AWAITING_DISPATCH) != stats.pipelinedRequests()) {
            fail("waits for dispatch: " + stats.waits(WaitReason.AWAITING_DISPATCH) + ", pipelined requests: "
                    + stats.pipelinedRequests());
        }
        long budgetWaits = budget == null ? 0 : budget.waitsStarted();
        if (stats.waits(WaitReason.BUDGET) != budgetWaits) {
            fail("waits for the budget: " + stats.waits(WaitReason.BUDGET) + ", the budget queued " + budgetWaits);
        }
        if (stats.waits(WaitReason.MUTED) != 0) {
            fail("MUTED is not a reason that is counted: " + stats.waits(WaitReason.MUTED));
        }
    }

    /**
     * The budget's accounting: it admitted exactly the in-flight bytes plus the reservations (held, or granted and
     * not yet taken) of the connections kpipe owns; it queues exactly the connections waiting for a grant; a
     * connection kpipe unmuted holds a reservation; at most one grant outstanding per connection. The peak stays
     * within the bound that holds by design: the capacity plus, per connection, its largest request (each connection
     * can overshoot its reservation by at most one request at a time; the first request of a connection, read while
     * Kafka owns it, is charged without a reservation). The issue's tighter bound, capacity plus the largest single
     * request, is only counted ("issue bound exceeded"): two connections can overshoot at once.
     */
    private void checkBudget() {
        long used = budget.used();
        if (used < 0) {
            fail("budget used is negative: " + used);
        }
        long expected = 0;
        int waiting = 0;
        for (ConnectionPipeline<Request, Response> cp : owned.values()) {
            int outstanding = Internals.reservation(cp).grants()
                    - Internals.reservation(cp).grantsConsumed();
            boolean pending = containsIdentity(pendingAdmissions, cp);
            // A wait given up (a drain after kpipe was disabled) after the budget granted it but before the admitted()
            // callback counted the grant: the grant is consumed, and its bytes released, ahead of the count.
            boolean consumedAhead = pending && !Internals.reservation(cp).waiting() && outstanding == -1;
            if (consumedAhead) {
                note("wait given up before its admitted() callback ran");
            } else if (outstanding < 0
                    || outstanding > 1
                    || (outstanding == 1 && !Internals.reservation(cp).waiting())
                    || (pending
                            && (outstanding != 0 || !Internals.reservation(cp).waiting()))) {
                fail("connection " + cp.id() + " has grants="
                        + Internals.reservation(cp).grants() + " consumed="
                        + Internals.reservation(cp).grantsConsumed()
                        + " pendingCallback=" + pending + " waitingForBudget="
                        + Internals.reservation(cp).waiting());
            }
            long reserved = Internals.reservation(cp).reserved();
            if (reserved < 0
                    || cp.inflight().bytes() < 0
                    || (reserved > 0 && Internals.reservation(cp).waiting())) {
                fail("connection " + cp.id() + " reserved=" + reserved + " inflightBytes="
                        + cp.inflight().bytes() + " waitingForBudget="
                        + Internals.reservation(cp).waiting());
            }
            Conn c = conn(cp.id());
            if (c.open
                    && cp.state() != ConnectionState.CLOSED
                    && !cp.muted()
                    && Internals.reservation(cp).reserved() == 0) {
                fail("connection " + c.index + " is unmuted by kpipe without a budget reservation");
            }
            expected += cp.inflight().bytes() + Internals.reservation(cp).reserved();
            if (Internals.reservation(cp).waiting()) {
                if (outstanding > 0 || pending) {
                    expected += Internals.reservation(cp).wanted();
                } else {
                    waiting++;
                }
            }
        }
        // each processor lists exactly the connections holding a reservation (nothing closed or handed back lingers)
        for (Proc p : procs) {
            ProcessorPipelines<Request, Response> pp = p.pipelines();
            if (pp == null) {
                continue;
            }
            String order = Internals.holders(pp).invariantViolation();
            if (order != null) {
                fail("processor's reservation holders: " + order);
            }
            int i = 0;
            for (Reservation r = Internals.holders(pp).first();
                    r != null;
                    r = Internals.holders(pp).next(r), i++) {
                ConnectionPipeline<Request, Response> h = null;
                for (ConnectionPipeline<Request, Response> cp : owned.values()) {
                    if (Internals.reservation(cp) == r) {
                        h = cp;
                    }
                }
                if (h == null || !r.listed() || r.reserved() <= 0 || h.processor() != p) {
                    fail("processor lists " + (h == null ? "a connection it does not own" : h.id())
                            + " as reservation holder " + i + " with listed=" + r.listed() + " reserved="
                            + r.reserved());
                }
            }
        }
        for (ConnectionPipeline<Request, Response> cp : owned.values()) {
            if (Internals.reservation(cp).reserved() > 0
                    && !Internals.reservation(cp).listed()) {
                fail("connection " + cp.id() + " holds "
                        + Internals.reservation(cp).reserved() + " reserved bytes but is not listed as a holder");
            }
        }
        if (used != expected) {
            fail("budget used=" + used + " but kpipe's connections hold " + expected
                    + " (in-flight bytes + reservations + granted reservations)");
        }
        if (budget.waiting() != waiting) {
            fail("budget has " + budget.waiting() + " waiters but " + waiting + " connections wait for a grant");
        }
        long bound = budget.capacity();
        long largest = 0;
        for (long l : largestChargeable) {
            bound += l;
            largest = Math.max(largest, l);
        }
        if (budget.peak() > bound) {
            fail("budget peak " + budget.peak() + " exceeds capacity + every connection's largest request = " + bound);
        }
        if (budget.peak() > budget.capacity() + largest) {
            note("issue bound exceeded");
        }
    }

    /**
     * The known design limit, in a quiescent state: connections wait for budget that is held only by idle
     * connections (unmuted, nothing in flight, holding the reservation for a next request that never comes), and the
     * head waiter does not fit beside them. Anything else left waiting is a bug (a release that admitted no one).
     */
    private boolean idleReservationStarvation() {
        if (budget == null || budget.waiting() == 0 || !pendingAdmissions.isEmpty()) {
            return false;
        }
        long idle = 0;
        for (ConnectionPipeline<Request, Response> cp : owned.values()) {
            if (Internals.reservation(cp).reserved() > 0
                    && !cp.muted()
                    && cp.inflight().isEmpty()
                    && !cp.awaitingDispatch()) {
                idle += Internals.reservation(cp).reserved();
            }
        }
        long head = budgetQueue().get(0).getValue();
        boolean headFits = !budgetSaturated() && (budget.used() == 0 || budget.used() + head <= budget.capacity());
        return idle > 0 && budget.used() == idle && !headFits;
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
        boolean starvation = scenario.backPressure.tolerateIdleStarvation() && idleReservationStarvation();
        for (Conn c : conns) {
            ConnectionPipeline<Request, Response> waiter = owned.get(c.id);
            if (starvation
                    && c.clientActive()
                    && waiter != null
                    && Internals.reservation(waiter).waiting()) {
                note("idle-reservation starvation");
                continue;
            }
            if (c.clientActive()) {
                if (c.written != c.requests.size() || !c.inbound.isEmpty()) {
                    fail("client " + c.index + " wedged: wrote " + c.written + "/" + c.requests.size() + ", unread "
                            + c.inbound.size());
                }
                long expected = c.requests.stream()
                        .filter(r -> !r.spec.kind().noResponse())
                        .count();
                if (c.received.size() != expected) {
                    fail("client " + c.index + " wedged: received " + c.received.size() + " of " + expected
                            + " responses");
                }
                if (c.channel.isMuted()) {
                    fail("connection " + c.index + " left " + c.channel.state);
                }
                ConnectionPipeline<Request, Response> cp = owned.get(c.id);
                if (cp != null && !coordinator.enabled()) {
                    fail("kpipe is disabled but still owns connection " + c.index + ": " + cp);
                }
                if (cp != null
                        && (!cp.inflight().isEmpty()
                                || cp.held() != null
                                || cp.awaitingDispatch()
                                || cp.throttled()
                                || cp.state() != ConnectionState.PIPELINED)) {
                    fail("kpipe still holds state for connection " + c.index + ": " + cp);
                }
            }
            if (c.breakAt() != null && !c.clientClosed) {
                if (c.open) {
                    fail("connection " + c.index + " still open after " + c.breakAt());
                }
                List<Request> before = c.requests.subList(0, c.breakAt().index).stream()
                        .filter(r -> !r.spec.kind().noResponse())
                        .toList();
                if (!c.received.equals(before)) {
                    fail("client " + c.index + " got " + c.received + " before the connection closed, but stock Kafka"
                            + " answers every request before the refused one or the end of the input: " + before);
                }
            }
            for (Request r : c.requests) {
                if (r.read
                        && !r.handled
                        && r.spec.kind() != Scenario.Kind.BAD
                        && r.spec.kind() != Scenario.Kind.END
                        && !(r.reauthDeferred && !c.open)) {
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
            ProcessorPipelines<Request, Response> pp = p.pipelines();
            if (pp != null
                    && (!Internals.ready(pp).isEmpty()
                            || !Internals.pending(pp).isEmpty()
                            || !Internals.signalled(pp).isEmpty()
                            || !Internals.pressureBlocked(pp).isEmpty())) {
                fail("processor " + p.index + " still has kpipe work: ready="
                        + Internals.ready(pp).size() + " pending="
                        + Internals.pending(pp).size() + " dispatched="
                        + Internals.signalled(pp).size() + " pressureBlocked="
                        + Internals.pressureBlocked(pp).size());
            }
        }
        if (budget != null) {
            gauge("budget.used", budget.used(), 0);
            gauge("budget.waiting", budget.waiting(), 0);
            if (!pendingAdmissions.isEmpty()) {
                fail("admitted() callbacks never ran: " + pendingAdmissions);
            }
            for (ConnectionPipeline<Request, Response> cp : delivered.keySet()) {
                if (Internals.reservation(cp).grants()
                        != Internals.reservation(cp).grantsConsumed()) {
                    fail("connection " + cp.id() + " was granted "
                            + Internals.reservation(cp).grants() + " times but consumed "
                            + Internals.reservation(cp).grantsConsumed() + " grants");
                }
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
    /**
     * Runs every enabled step round-robin until {@code done} holds: for progress that never reaches quiescence
     * (connections taking turns with the budget while idle reservations are revoked).
     *
     * @param maxSteps fail (no progress) beyond this many steps
     * @param done the progress awaited
     */
    void runFairUntil(int maxSteps, java.util.function.BooleanSupplier done) {
        int next = 0;
        for (int n = 0; !done.getAsBoolean(); n++) {
            List<Step> steps = enabled(false);
            if (steps.isEmpty()) {
                fail("quiescent before the progress awaited");
            }
            if (n >= maxSteps) {
                fail("no progress after " + maxSteps + " fair steps; enabled " + steps + "\n" + dump());
            }
            apply(steps.get(next++ % steps.size()));
        }
    }

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

    ConnectionPipeline<Request, Response> owned(int conn) {
        return owned.get(conns.get(conn).id);
    }

    /**
     * A canonical description of every piece of state that can influence what happens next (the
     * fake's and kpipe's), for exhaustive exploration with memoization.
     */
    String fingerprint() {
        StringBuilder sb = new StringBuilder(512);
        IdentityHashMap<ConnectionPipeline<Request, Response>, Integer> gens = new IdentityHashMap<>();
        for (Proc p : procs) {
            sb.append('P').append(p.phase.ordinal()).append(p.dirty ? 'd' : '-').append(p.effect ? 'e' : '-');
            sb.append('q');
            p.responseQueue.forEach(r -> sb.append(r.id()).append(','));
            sb.append('i');
            p.inflightResponses.values().forEach(r -> sb.append(r.id()).append(','));
            sb.append('R');
            p.completedReceives.forEach(
                    r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
            sb.append('S');
            p.completedSends.forEach(r -> sb.append(r.id()).append(','));
            sb.append('D');
            p.disconnected.forEach(c -> sb.append(c.index).append(','));
            ProcessorPipelines<Request, Response> pp = p.pipelines();
            if (pp != null) {
                sb.append("|r");
                Internals.ready(pp).forEach(r -> sb.append(((Response) r).id()).append(','));
                sb.append('p');
                Internals.pending(pp).forEach(cp -> describe(sb, cp, gens));
                sb.append('x');
                Internals.signalled(pp).forEach(cp -> describe(sb, cp, gens));
                sb.append('b');
                Internals.pressureBlocked(pp).forEach(cp -> describe(sb, cp, gens));
            }
            sb.append(';');
        }
        for (Conn c : conns) {
            sb.append('C')
                    .append(c.open ? 'o' : '-')
                    .append(c.clientClosed ? 'x' : '-')
                    .append(c.closedByBroker ? 'b' : '-')
                    .append(c.channel.state.ordinal())
                    .append('w')
                    .append(c.written)
                    .append('u')
                    .append(c.inbound.size())
                    .append('s')
                    .append(c.send == null ? "" : c.send.id())
                    .append(c.sendDone ? '!' : '-')
                    .append('v')
                    .append(c.received.size())
                    .append('h')
                    .append(c.lastHandled)
                    .append(c.authenticating ? 'A' : '-')
                    .append(c.reauthPending == null ? "" : "p" + c.reauthPending.index)
                    .append('[');
            for (Request r : c.requests) {
                sb.append(r.state()).append(',');
            }
            sb.append(']');
        }
        sb.append("Q");
        requestQueue.forEach(
                r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("H");
        for (Request r : handlers) {
            sb.append(r == null ? "_" : r.conn.index + "." + r.index).append(',');
        }
        sb.append("W");
        completions.forEach(
                r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("V");
        verifications.forEach(
                r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("C");
        callbacks.forEach(
                r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("T");
        throttleEnds.forEach(
                r -> sb.append(r.conn.index).append('.').append(r.index).append(','));
        sb.append("Z");
        for (Response r : responses) {
            sb.append(r.id())
                    .append(r.status.ordinal())
                    .append(r.handedToBroker)
                    .append(r.completions)
                    .append(',');
        }
        sb.append("K");
        new TreeMap<>(owned).forEach((id, cp) -> describe(sb, cp, gens));
        sb.append('G')
                .append(stats.pipelinedConnections())
                .append(',')
                .append(stats.inflightRequests())
                .append(',')
                .append(stats.heldRequests())
                .append(',')
                .append(stats.heldResponses())
                .append(',')
                .append(stats.throttledConnections());
        sb.append(saturated ? "!" : "-").append(pressureWindowsLeft);
        sb.append(coordinator.enabled() ? 'E' : 'e').append(enableFlipsLeft).append(everDisabled ? 'x' : '-');
        if (budget != null) {
            sb.append('U')
                    .append(budget.used())
                    .append(budgetSaturated() ? 's' : '-')
                    .append('F');
            budgetQueue().forEach(e -> describe(sb, (ConnectionPipeline<Request, Response>) e.getKey(), gens));
            sb.append('A');
            pendingAdmissions.forEach(cp -> describe(sb, cp, gens));
        }
        return sb.toString();
    }

    private void describe(
            StringBuilder sb,
            ConnectionPipeline<Request, Response> cp,
            IdentityHashMap<ConnectionPipeline<Request, Response>, Integer> gens) {
        Integer gen = gens.get(cp);
        if (gen != null) {
            sb.append('#').append(gen).append(',');
            return;
        }
        gens.put(cp, gens.size());
        sb.append('{')
                .append(cp.id().substring(cp.id().lastIndexOf('-') + 1))
                .append(owned.get(cp.id()) == cp ? 'o' : 's')
                .append(cp.state().ordinal())
                .append(cp.inflight().sendOutstanding() ? 'S' : '-')
                .append(cp.muted() ? 'M' : '-')
                .append(cp.scheduled() ? 'P' : '-')
                .append(cp.pressureBlocked() ? 'B' : '-')
                .append('r')
                .append(Internals.reservation(cp).reserved())
                .append(
                        Internals.reservation(cp).waiting()
                                ? "w" + Internals.reservation(cp).wanted()
                                : "")
                .append('g')
                .append(Internals.reservation(cp).grants()
                        - Internals.reservation(cp).grantsConsumed())
                .append('L')
                .append(Internals.largestRequest(cp))
                .append('t')
                .append(cp.throttleWindows())
                .append('b')
                .append(cp.inflight().bytes())
                .append('a')
                .append(req(Internals.dispatchRequest(cp)))
                .append(cp.awaitingAppend() ? "A" : "")
                .append('h')
                .append(req(cp.held()))
                // what the clock decides: quiet (re-authentication), idle reservation (revocable)
                .append(nanos() - cp.lastWrittenNanos() >= PipelineCoordinator.REAUTHENTICATION_QUIET_NANOS ? 'q' : '-')
                .append(
                        Internals.reservation(cp).reserved() > 0
                                        && nanos() - Internals.reservation(cp).reservedAtNanos()
                                                >= PipelineCoordinator.IDLE_RESERVATION_NANOS
                                        && coordinator
                                                                .processorTable()
                                                                .of(cp.processor())
                                                                .round()
                                                        - Internals.reservation(cp)
                                                                .reservedAtRound()
                                                >= 2
                                ? 'i'
                                : '-')
                .append('[');
        cp.inflight()
                .forEach((request, response) -> sb.append(req(request))
                        .append(':')
                        .append(response == null ? "" : ((Response) response).id())
                        .append(','));
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
            sb.append("  processor ")
                    .append(p.index)
                    .append(": phase=")
                    .append(p.phase)
                    .append(" dirty=")
                    .append(p.dirty)
                    .append(" responseQueue=")
                    .append(p.responseQueue)
                    .append(" inflight=")
                    .append(p.inflightResponses.values());
            ProcessorPipelines<Request, Response> pp = p.pipelines();
            if (pp != null) {
                sb.append(" kpipe.ready=")
                        .append(Internals.ready(pp).size())
                        .append(" pending=")
                        .append(Internals.pending(pp).size())
                        .append(" dispatched=")
                        .append(Internals.signalled(pp).size());
            }
            sb.append('\n');
        }
        for (Conn c : conns) {
            sb.append("  connection ")
                    .append(c.index)
                    .append(": ")
                    .append(c.open ? "open" : "closed")
                    .append(c.clientClosed ? " (client closed)" : "")
                    .append(c.closedByBroker ? " (broker closed)" : "")
                    .append(" kafka=")
                    .append(c.channel.state)
                    .append(" written=")
                    .append(c.written)
                    .append('/')
                    .append(c.requests.size())
                    .append(" unread=")
                    .append(c.inbound.size())
                    .append(" send=")
                    .append(c.send)
                    .append(c.sendDone ? " (done)" : "")
                    .append(" received=")
                    .append(c.received.size())
                    .append(c.authenticating ? " re-authenticating" : "")
                    .append('\n');
            for (Request r : c.requests) {
                sb.append("    ").append(r).append(' ').append(r.state()).append('\n');
            }
            ConnectionPipeline<Request, Response> cp = owned.get(c.id);
            if (cp != null) {
                sb.append("    kpipe: ").append(cp).append('\n');
            }
        }
        sb.append("  requestQueue=")
                .append(requestQueue)
                .append(" handlers=")
                .append(java.util.Arrays.toString(handlers))
                .append(" completions=")
                .append(completions)
                .append(" throttleEnds=")
                .append(throttleEnds)
                .append('\n');
        sb.append("  stats: pipelined=")
                .append(stats.pipelinedConnections())
                .append(" inflight=")
                .append(stats.inflightRequests())
                .append(" heldRequests=")
                .append(stats.heldRequests())
                .append(" heldResponses=")
                .append(stats.heldResponses())
                .append(" throttled=")
                .append(stats.throttledConnections())
                .append(" faults=")
                .append(stats.pluginFaults())
                .append(" kpipe.enable=")
                .append(coordinator.enabled())
                .append(" flipsLeft=")
                .append(enableFlipsLeft)
                .append('\n');
        if (budget != null) {
            sb.append("  budget: used=")
                    .append(budget.used())
                    .append('/')
                    .append(budget.capacity())
                    .append(" peak=")
                    .append(budget.peak())
                    .append(" saturated=")
                    .append(budgetSaturated())
                    .append(" queue=")
                    .append(budgetQueue().stream()
                            .map(e -> ((ConnectionPipeline<Request, Response>) e.getKey()).id() + ":" + e.getValue())
                            .toList())
                    .append(" pendingAdmissions=")
                    .append(pendingAdmissions.stream().map(cp -> cp.id()).toList())
                    .append(" grants=")
                    .append(grantLog)
                    .append('\n');
        }
        if (scenario.backPressure.anyPressure()) {
            sb.append("  storage pressure: flag=")
                    .append(saturated)
                    .append(" signal=")
                    .append(signal.saturated())
                    .append(" windowsLeft=")
                    .append(pressureWindowsLeft)
                    .append('\n');
        }
        return sb.toString();
    }

    private String describe(String problem) {
        int from = Math.max(0, trace.size() - 80);
        return problem + "\nsteps (" + trace.size() + ", last " + (trace.size() - from) + "): "
                + trace.subList(from, trace.size()) + "\n" + dump();
    }

    void fail(String problem) {
        AssertionError e = new AssertionError(describe(problem));
        if (failure == null) {
            failure = e; // rethrown after the step even if kpipe's own guards caught it (they catch any throwable)
        }
        throw e;
    }

    /** The first failure of a check, kept in case kpipe caught the AssertionError thrown from a callback. */
    private AssertionError failure;

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
