// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.HookPoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The hook list, written once for every line: each broker method kpipe advises with its advice, and the members the
 * core calls or reads. The types that differ between lines come from the line's {@link KafkaLine}; every other name is
 * the same from 3.8 to 4.4 ({@code javap -p}). {@link KafkaBinding} checks and installs exactly these. Stateless.
 */
final class HookList {

    static final String PROCESSOR = "kafka.network.Processor";
    static final String REQUEST_CHANNEL = "kafka.network.RequestChannel";
    static final String KAFKA_APIS = "kafka.server.KafkaApis";
    static final String REPLICA_MANAGER = "kafka.server.ReplicaManager";
    static final String KAFKA_CHANNEL = "org.apache.kafka.common.network.KafkaChannel";
    private static final String MUTE_EVENT = "org.apache.kafka.common.network.KafkaChannel$ChannelMuteEvent";
    /** {@code kafka.server.KafkaRequestHandler$}, the Scala object holding {@code wrapAsyncCallback}. */
    private static final String REQUEST_HANDLER_OBJECT = "kafka.server.KafkaRequestHandler$";

    private static final String STRING = String.class.getName();

    private HookList() {}

    /**
     * @param line the line's names
     * @return every broker method kpipe always advises, with its advice, in installation order
     */
    static List<AdvisedMethod> advised(KafkaLine line) {
        String request = line.requests().request();
        return List.of(
                hook(ProcessorAdvice.Round.class, PROCESSOR, "processNewResponses"),
                hook(ProcessorAdvice.Dequeue.class, PROCESSOR, "dequeueResponse"),
                hook(
                        ProcessorAdvice.Completed.class,
                        PROCESSOR,
                        "updateRequestMetrics",
                        line.requests().response()),
                hook(ProcessorAdvice.MuteEventHook.class, PROCESSOR, "handleChannelMuteEvent", STRING, MUTE_EVENT),
                hook(ProcessorAdvice.TryUnmute.class, PROCESSOR, "tryUnmuteChannel", STRING),
                hook(ProcessorAdvice.Close.class, PROCESSOR, "close", STRING),
                hook(ProcessorAdvice.Disconnected.class, PROCESSOR, "processDisconnected"),
                hook(ProcessorAdvice.Receives.class, PROCESSOR, "processCompletedReceives"),
                hook(RequestChannelAdvice.class, REQUEST_CHANNEL, "sendRequest", request),
                hook(KafkaApisAdvice.class, KAFKA_APIS, "handle", request, line.requestLocal()),
                hook(
                        KafkaChannelAdvice.class,
                        KAFKA_CHANNEL,
                        "maybeBeginServerReauthentication",
                        "org.apache.kafka.common.network.NetworkReceive",
                        "java.util.function.Supplier"),
                hook(KafkaChannelReadAdvice.class, KAFKA_CHANNEL, "read"));
    }

    /**
     * The hooks of deferred dispatch through a {@code CallbackRequest} (KIP-890 transaction verification; see
     * {@link DeferredAppends}): the line's verification entry point, the wrapped callback of
     * {@code KafkaRequestHandler.wrapAsyncCallback} (the lambda {@code $anonfun$wrapAsyncCallback$2(request,
     * Function2, RequestLocal, RequestChannel, Object)}, the same name on every line, its request and
     * {@code RequestLocal} types the line's) and the callback-completion setter. A transactional PRODUCE needs these,
     * and so does a TXN_OFFSET_COMMIT on the classic group coordinator (3.8–3.9), which wraps its post-verification
     * append the same way.
     *
     * @param line the line's names
     * @return the advised methods of deferred dispatch through a {@code CallbackRequest}
     */
    static List<AdvisedMethod> callbackRequest(KafkaLine line) {
        return List.of(
                new AdvisedMethod(line.verification().entryPoint(), AppendAdvice.Verification.class),
                hook(
                        AppendAdvice.CallbackInvoked.class,
                        REQUEST_HANDLER_OBJECT,
                        "$anonfun$wrapAsyncCallback$2",
                        line.requests().request(),
                        "scala.Function2",
                        line.requestLocal(),
                        REQUEST_CHANNEL,
                        Object.class.getName()),
                new AdvisedMethod(line.requests().callbackCompletion(), AppendAdvice.CallbackCompleted.class));
    }

    /**
     * The hooks of deferred dispatch through a verification callback (KIP-848's group coordinator runtime: a
     * TXN_OFFSET_COMMIT's write is enqueued by the callback of its partition's verification, on the thread that
     * completes it): the line's partition verification (the callback it is given) and {@code
     * ReplicaManager.generalizedCallback$1(Tuple2, Function1, TopicPartition)}, the private method that invokes that
     * callback, the same on every line (3.8–4.4, {@code javap -p}).
     *
     * @param line the line's names
     * @return the advised methods of deferred dispatch through a verification callback
     */
    static List<AdvisedMethod> verificationCallback(KafkaLine line) {
        return List.of(
                new AdvisedMethod(
                        line.verification().partitionVerification(), AppendAdvice.PartitionVerification.class),
                hook(
                        AppendAdvice.VerificationCallbackReturned.class,
                        REPLICA_MANAGER,
                        "generalizedCallback$1",
                        "scala.Tuple2",
                        "scala.Function1",
                        "org.apache.kafka.common.TopicPartition"));
    }

    /**
     * The hook points of deferred dispatch, per API (KIP-890: the order-defining step of a verified transactional
     * write comes after handle returned): PRODUCE through a {@code CallbackRequest} ({@link #callbackRequest});
     * TXN_OFFSET_COMMIT through a {@code CallbackRequest} (classic coordinator) or a verification callback
     * ({@link #verificationCallback}, KIP-848's coordinator runtime), so both. The APIs whose points all exist are
     * what the binding reports ({@code BrokerCapabilities.deferredDispatch}); adding one is an entry here.
     *
     * @param line the line's names
     * @return per API, the advised methods that report its deferred dispatch; unmodifiable
     */
    static Map<ApiKeys, List<AdvisedMethod>> deferredDispatch(KafkaLine line) {
        List<AdvisedMethod> both = new ArrayList<>(callbackRequest(line));
        both.addAll(verificationCallback(line));
        Map<ApiKeys, List<AdvisedMethod>> m = new EnumMap<>(ApiKeys.class);
        m.put(ApiKeys.PRODUCE, callbackRequest(line));
        m.put(ApiKeys.TXN_OFFSET_COMMIT, List.copyOf(both));
        return Collections.unmodifiableMap(m);
    }

    /** @return the broker members the core calls or reads (not advised), the same on every line */
    static List<HookPoint> accessed() {
        return List.of(
                HookPoint.method(PROCESSOR, "responseQueue"),
                HookPoint.method(PROCESSOR, "selector"),
                HookPoint.method(PROCESSOR, "wakeup"),
                HookPoint.method(PROCESSOR, "id"),
                HookPoint.field(PROCESSOR, "listenerName"),
                HookPoint.field(PROCESSOR, "requestChannel"),
                HookPoint.field(PROCESSOR, "metrics"),
                HookPoint.field(PROCESSOR, "config"),
                HookPoint.method(KAFKA_APIS, "metrics"),
                HookPoint.method(KAFKA_APIS, "config"),
                HookPoint.method(KAFKA_APIS, "metadataCache"),
                HookPoint.method(KAFKA_APIS, "requestChannel"),
                HookPoint.method(KAFKA_APIS, "replicaManager"),
                HookPoint.method(REPLICA_MANAGER, "delayedProducePurgatory"),
                HookPoint.method(REQUEST_CHANNEL, "requestQueue"),
                HookPoint.method(REQUEST_CHANNEL, "queueSize"),
                HookPoint.method(KAFKA_CHANNEL, "ready"),
                HookPoint.method(KAFKA_CHANNEL, "id"),
                HookPoint.method(KAFKA_CHANNEL, "muteState"),
                HookPoint.field(KAFKA_CHANNEL, "authenticator"),
                HookPoint.field(KAFKA_CHANNEL, "lastReauthenticationStartNanos"),
                HookPoint.field(KAFKA_CHANNEL, "MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS"),
                HookPoint.method("org.apache.kafka.common.network.Authenticator", "serverSessionExpirationTimeNanos"),
                HookPoint.method("org.apache.kafka.common.network.Selector", "channel", STRING));
    }

    private static AdvisedMethod hook(Class<?> advice, String className, String method, String... parameterTypes) {
        return new AdvisedMethod(HookPoint.method(className, method, parameterTypes), advice);
    }
}
