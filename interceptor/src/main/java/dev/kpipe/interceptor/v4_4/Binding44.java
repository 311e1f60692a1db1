package dev.kpipe.interceptor.v4_4;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.spi.NetworkEventListener;
import java.util.List;
import java.util.function.Predicate;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

/** Hook points and advice for Kafka 4.4.x. */
public final class Binding44 implements Interceptor.Binding {

    static final String PROCESSOR = "kafka.network.Processor";
    static final String REQUEST_CHANNEL = "kafka.network.RequestChannel";
    static final String KAFKA_APIS = "kafka.server.KafkaApis";
    static final String REQUEST = "org.apache.kafka.network.Request";
    static final String RESPONSE = "org.apache.kafka.network.Response";
    static final String MUTE_EVENT = "org.apache.kafka.common.network.KafkaChannel$ChannelMuteEvent";

    @Override
    public String versionLine() {
        return "4.4";
    }

    @Override
    public List<HookPoint> hookPoints() {
        return List.of(
            HookPoint.method(PROCESSOR, "processNewResponses"),
            HookPoint.method(PROCESSOR, "dequeueResponse"),
            HookPoint.method(PROCESSOR, "updateRequestMetrics", RESPONSE),
            HookPoint.method(PROCESSOR, "handleChannelMuteEvent", String.class.getName(), MUTE_EVENT),
            HookPoint.method(PROCESSOR, "tryUnmuteChannel", String.class.getName()),
            HookPoint.method(PROCESSOR, "close", String.class.getName()),
            HookPoint.method(PROCESSOR, "processDisconnected"),
            HookPoint.method(PROCESSOR, "responseQueue"),
            HookPoint.method(PROCESSOR, "selector"),
            HookPoint.method(PROCESSOR, "wakeup"),
            HookPoint.method(PROCESSOR, "id"),
            HookPoint.field(PROCESSOR, "listenerName"),
            HookPoint.field(PROCESSOR, "requestChannel"),
            HookPoint.method(REQUEST_CHANNEL, "sendRequest", REQUEST),
            HookPoint.method(KAFKA_APIS, "handle", REQUEST, "org.apache.kafka.server.common.RequestLocal"),
            HookPoint.method(KAFKA_APIS, "metadataCache"),
            HookPoint.method(KAFKA_APIS, "requestChannel"),
            HookPoint.method(KAFKA_APIS, "replicaManager"),
            HookPoint.method("kafka.server.ReplicaManager", "delayedProducePurgatory"),
            HookPoint.method("org.apache.kafka.server.purgatory.DelayedOperationPurgatory", "numDelayed"),
            HookPoint.method(REQUEST_CHANNEL, "requestQueue"),
            HookPoint.method(REQUEST_CHANNEL, "queueSize"),
            HookPoint.method(REQUEST, "context"),
            HookPoint.method(REQUEST, "body"),
            HookPoint.method(REQUEST, "sizeInBytes"),
            HookPoint.method(REQUEST, "processor"),
            HookPoint.method(RESPONSE, "request"),
            HookPoint.method("org.apache.kafka.network.SendResponse", "request"),
            HookPoint.method("org.apache.kafka.network.NoOpResponse", "request"),
            HookPoint.method("org.apache.kafka.network.CloseConnectionResponse", "request"),
            HookPoint.method("org.apache.kafka.network.StartThrottlingResponse", "request"),
            HookPoint.method("org.apache.kafka.network.EndThrottlingResponse", "request"),
            HookPoint.method("org.apache.kafka.metadata.MetadataCache", "getTopicName", "org.apache.kafka.common.Uuid"));
    }

    @Override
    public List<String> transformedClasses() {
        return List.of(PROCESSOR, REQUEST_CHANNEL, KAFKA_APIS);
    }

    @Override
    public AgentBuilder advise(AgentBuilder builder) {
        return builder
            .type(named(PROCESSOR))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(ProcessorAdvice.Round.class).on(named("processNewResponses").and(takesArguments(0))))
                .visit(Advice.to(ProcessorAdvice.Dequeue.class).on(named("dequeueResponse").and(takesArguments(0))))
                .visit(Advice.to(ProcessorAdvice.Completed.class).on(named("updateRequestMetrics").and(takesArguments(1))))
                .visit(Advice.to(ProcessorAdvice.MuteEventHook.class).on(named("handleChannelMuteEvent").and(takesArguments(2))))
                .visit(Advice.to(ProcessorAdvice.TryUnmute.class).on(named("tryUnmuteChannel").and(takesArguments(1))))
                .visit(Advice.to(ProcessorAdvice.Close.class).on(named("close").and(takesArguments(String.class))))
                .visit(Advice.to(ProcessorAdvice.Disconnected.class).on(named("processDisconnected").and(takesArguments(0)))))
            .type(named(REQUEST_CHANNEL))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(RequestChannelAdvice.class).on(named("sendRequest").and(takesArguments(1)))))
            .type(named(KAFKA_APIS))
            .transform((b, type, loader, module, domain) -> b
                .visit(Advice.to(KafkaApisAdvice.class).on(named("handle").and(takesArguments(2)))));
    }

    @Override
    public void activate(NetworkEventListener listener, Predicate<String> listenerFilter) {
        Hooks44.activate(listener, listenerFilter);
    }
}
