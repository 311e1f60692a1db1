package dev.kpipe.interceptor.core;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.spi.NetworkEventListener;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

/**
 * The part of a binding that is the same for Kafka 4.2 to 4.4: the hooked members of {@code kafka.network.Processor},
 * {@code kafka.network.RequestChannel} and {@code kafka.server.KafkaApis} (same names, same erased signatures apart
 * from the request and response types) and of kafka-clients' {@code KafkaChannel} (server-side SASL
 * re-authentication, KIP-368), the advice on them ({@link Hooks}), and the broker gauges. A subclass names
 * its version's request and response classes, adds the hook points of its {@link RequestModel}, and creates the model.
 *
 * <p>Instances are immutable; {@link #activate} is called on the installing thread.
 */
public abstract class KafkaBinding implements Interceptor.Binding {

    /** {@code kafka.network.Processor}. */
    protected static final String PROCESSOR = "kafka.network.Processor";
    /** {@code kafka.network.RequestChannel}. */
    protected static final String REQUEST_CHANNEL = "kafka.network.RequestChannel";
    /** {@code kafka.server.KafkaApis}. */
    protected static final String KAFKA_APIS = "kafka.server.KafkaApis";
    /** {@code org.apache.kafka.common.network.KafkaChannel} (kafka-clients). */
    protected static final String KAFKA_CHANNEL = "org.apache.kafka.common.network.KafkaChannel";
    /** The mute state machine's event type. */
    protected static final String MUTE_EVENT = "org.apache.kafka.common.network.KafkaChannel$ChannelMuteEvent";

    private final String versionLine;
    private final String requestClass;
    private final String responseClass;

    /**
     * @param versionLine the version line(s) served, e.g. {@code 4.4}
     * @param requestClass the binary name of the broker's request class
     * @param responseClass the binary name of the broker's response base type
     */
    protected KafkaBinding(String versionLine, String requestClass, String responseClass) {
        this.versionLine = versionLine;
        this.requestClass = requestClass;
        this.responseClass = responseClass;
    }

    /** @return the hook points of the {@link RequestModel}: request and response members and response classes */
    protected abstract List<HookPoint> modelHookPoints();

    /**
     * Creates the model; called on activation (and deactivation), after the hook points were checked.
     *
     * @return the version's request and response model
     */
    protected abstract RequestModel createModel();

    @Override
    public final String versionLine() {
        return versionLine;
    }

    @Override
    public final List<HookPoint> hookPoints() {
        List<HookPoint> points = new ArrayList<>(List.of(
            HookPoint.method(PROCESSOR, "processNewResponses"),
            HookPoint.method(PROCESSOR, "dequeueResponse"),
            HookPoint.method(PROCESSOR, "updateRequestMetrics", responseClass),
            HookPoint.method(PROCESSOR, "handleChannelMuteEvent", String.class.getName(), MUTE_EVENT),
            HookPoint.method(PROCESSOR, "tryUnmuteChannel", String.class.getName()),
            HookPoint.method(PROCESSOR, "close", String.class.getName()),
            HookPoint.method(PROCESSOR, "processDisconnected"),
            HookPoint.method(PROCESSOR, "processCompletedReceives"),
            HookPoint.method(PROCESSOR, "responseQueue"),
            HookPoint.method(PROCESSOR, "selector"),
            HookPoint.method(PROCESSOR, "wakeup"),
            HookPoint.method(PROCESSOR, "id"),
            HookPoint.field(PROCESSOR, "listenerName"),
            HookPoint.field(PROCESSOR, "requestChannel"),
            HookPoint.method(REQUEST_CHANNEL, "sendRequest", requestClass),
            HookPoint.method(KAFKA_APIS, "handle", requestClass, "org.apache.kafka.server.common.RequestLocal"),
            HookPoint.method(KAFKA_APIS, "metadataCache"),
            HookPoint.method(KAFKA_APIS, "requestChannel"),
            HookPoint.method(KAFKA_APIS, "replicaManager"),
            HookPoint.method("kafka.server.ReplicaManager", "delayedProducePurgatory"),
            HookPoint.method("org.apache.kafka.server.purgatory.DelayedOperationPurgatory", "numDelayed"),
            HookPoint.method(REQUEST_CHANNEL, "requestQueue"),
            HookPoint.method(REQUEST_CHANNEL, "queueSize"),
            HookPoint.method("org.apache.kafka.metadata.MetadataCache", "getTopicName", "org.apache.kafka.common.Uuid"),
            HookPoint.method(KAFKA_CHANNEL, "maybeBeginServerReauthentication",
                "org.apache.kafka.common.network.NetworkReceive", "java.util.function.Supplier"),
            HookPoint.method(KAFKA_CHANNEL, "ready"),
            HookPoint.method(KAFKA_CHANNEL, "id"),
            HookPoint.field(KAFKA_CHANNEL, "authenticator"),
            HookPoint.field(KAFKA_CHANNEL, "lastReauthenticationStartNanos"),
            HookPoint.field(KAFKA_CHANNEL, "MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS"),
            HookPoint.method("org.apache.kafka.common.network.Authenticator", "serverSessionExpirationTimeNanos"),
            HookPoint.method("org.apache.kafka.common.network.Selector", "channel", String.class.getName())));
        points.addAll(modelHookPoints());
        return Collections.unmodifiableList(points);
    }

    @Override
    public final List<String> transformedClasses() {
        return List.of(PROCESSOR, REQUEST_CHANNEL, KAFKA_APIS, KAFKA_CHANNEL);
    }

    @Override
    public final AgentBuilder advise(AgentBuilder builder) {
        return builder
            .type(named(PROCESSOR))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(ProcessorAdvice.Round.class).on(named("processNewResponses").and(takesArguments(0))))
                .visit(Advice.to(ProcessorAdvice.Dequeue.class).on(named("dequeueResponse").and(takesArguments(0))))
                .visit(Advice.to(ProcessorAdvice.Completed.class).on(named("updateRequestMetrics").and(takesArguments(1))))
                .visit(Advice.to(ProcessorAdvice.MuteEventHook.class).on(named("handleChannelMuteEvent").and(takesArguments(2))))
                .visit(Advice.to(ProcessorAdvice.TryUnmute.class).on(named("tryUnmuteChannel").and(takesArguments(1))))
                .visit(Advice.to(ProcessorAdvice.Close.class).on(named("close").and(takesArguments(String.class))))
                .visit(Advice.to(ProcessorAdvice.Disconnected.class).on(named("processDisconnected").and(takesArguments(0))))
                .visit(Advice.to(ProcessorAdvice.Receives.class).on(named("processCompletedReceives").and(takesArguments(0)))))
            .type(named(REQUEST_CHANNEL))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(RequestChannelAdvice.class).on(named("sendRequest").and(takesArguments(1)))))
            .type(named(KAFKA_APIS))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(KafkaApisAdvice.class).on(named("handle").and(takesArguments(2)))))
            .type(named(KAFKA_CHANNEL))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(KafkaChannelAdvice.class)
                    .on(named("maybeBeginServerReauthentication").and(takesArguments(2)))));
    }

    @Override
    public void link() throws UnsupportedBrokerException {
        try {
            MethodHandles.lookup().ensureInitialized(PendingReauthentication.class);
        } catch (LinkageError | IllegalAccessException e) {
            Throwable cause = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
            throw new UnsupportedBrokerException("kpipe cannot hook Kafka " + versionLine
                + ": KafkaChannel's re-authentication state is not as expected (" + cause + ")");
        }
    }

    @Override
    public final void activate(NetworkEventListener listener, Predicate<String> listenerFilter) {
        Hooks.activate(listener, listenerFilter, createModel());
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[Kafka " + versionLine + ", " + requestClass + "]";
    }
}
