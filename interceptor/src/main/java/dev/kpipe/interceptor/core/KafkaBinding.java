// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static net.bytebuddy.matcher.ElementMatchers.named;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.spi.TopicNames;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.dynamic.DynamicType;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The part of a binding that is the same for Kafka 3.8 to 4.4: the hook list, written once ({@link #advisedMethods()},
 * used both to check the running broker and to install the advice), the other broker members the core reaches
 * ({@code kafka.network.Processor}, {@code RequestChannel}, {@code KafkaApis} and kafka-clients' {@code KafkaChannel},
 * {@code Selector} and {@code Authenticator}: same names, same erased signatures on every line apart from the request,
 * response and {@code RequestLocal} types), the advice ({@link Hooks}) and the broker gauges.
 *
 * <p>A subclass, one per version line in its own module compiled against the oldest line it serves, names its line's
 * request, response and {@code RequestLocal} classes, adds the hook points of its version-specific members, and
 * supplies its {@link RequestModel}, its metadata cache's topic-name lookup and its produce purgatory's size.
 *
 * <p>Instances are immutable but for {@link #disableDeferredDispatch()}, which the install calls, if at all, before
 * anything else; {@link #activate} is called on the installing thread.
 */
public abstract class KafkaBinding implements Interceptor.Binding {

    /** {@code kafka.network.Processor}. */
    protected static final String PROCESSOR = "kafka.network.Processor";
    /** {@code kafka.network.RequestChannel}. */
    protected static final String REQUEST_CHANNEL = "kafka.network.RequestChannel";
    /** {@code kafka.server.KafkaApis}. */
    protected static final String KAFKA_APIS = "kafka.server.KafkaApis";
    /** {@code kafka.server.ReplicaManager}. */
    protected static final String REPLICA_MANAGER = "kafka.server.ReplicaManager";
    /** {@code org.apache.kafka.common.network.KafkaChannel} (kafka-clients). */
    protected static final String KAFKA_CHANNEL = "org.apache.kafka.common.network.KafkaChannel";
    /** {@code org.apache.kafka.common.Uuid} (kafka-clients), the topic id type. */
    protected static final String UUID = "org.apache.kafka.common.Uuid";
    /** The mute state machine's event type. */
    protected static final String MUTE_EVENT = "org.apache.kafka.common.network.KafkaChannel$ChannelMuteEvent";

    /** {@code kafka.server.KafkaRequestHandler$}, the Scala object holding {@code wrapAsyncCallback}. */
    protected static final String REQUEST_HANDLER_OBJECT = "kafka.server.KafkaRequestHandler$";

    private final String versionLine;
    /** The APIs whose deferred-dispatch hooks are installed; set by {@link #deferredDispatch(Set)} before install. */
    private volatile Set<ApiKeys> deferredDispatch = EnumSet.of(ApiKeys.PRODUCE, ApiKeys.TXN_OFFSET_COMMIT);

    private final String requestClass;
    private final String responseClass;
    private final String requestLocalClass;

    /**
     * @param versionLine the version line(s) served, e.g. {@code 4.4} or {@code 3.8-3.9}
     * @param requestClass the binary name of the broker's request class
     * @param responseClass the binary name of the broker's response base type
     * @param requestLocalClass the binary name of the second parameter of {@code KafkaApis.handle}
     *     ({@code kafka.server.RequestLocal} up to 3.9, {@code org.apache.kafka.server.common.RequestLocal} from 4.0)
     */
    protected KafkaBinding(String versionLine, String requestClass, String responseClass, String requestLocalClass) {
        this.versionLine = versionLine;
        this.requestClass = requestClass;
        this.responseClass = responseClass;
        this.requestLocalClass = requestLocalClass;
    }

    /**
     * @return the hook points of the version-specific members the subclass uses: its {@link RequestModel}'s request
     *     and response members and classes, its metadata cache's {@code getTopicName} and its purgatory's
     *     {@code numDelayed}
     */
    protected abstract List<HookPoint> versionHookPoints();

    /**
     * {@code org.apache.kafka.server.transaction.AddPartitionsToTxnManager.addOrVerifyTransaction} with its parameter
     * types, as in 4.1 and later (the manager moved to Java and to the {@code server} module in 4.1).
     */
    protected static final HookPoint ADD_OR_VERIFY_TRANSACTION_4_1 = HookPoint.method(
            "org.apache.kafka.server.transaction.AddPartitionsToTxnManager",
            "addOrVerifyTransaction",
            String.class.getName(),
            "long",
            "short",
            "java.util.Collection",
            "org.apache.kafka.server.transaction.AddPartitionsToTxnManager$AppendCallback",
            "org.apache.kafka.server.transaction.AddPartitionsToTxnManager$TransactionSupportedOperation");

    /**
     * {@code kafka.server.ReplicaManager.maybeSendPartitionToTransactionCoordinator} with its parameter types, as in
     * 4.1 and later (the {@code TransactionSupportedOperation} moved with the manager to the {@code server} module).
     */
    protected static final HookPoint PARTITION_VERIFICATION_4_1 = HookPoint.method(
            REPLICA_MANAGER,
            "maybeSendPartitionToTransactionCoordinator",
            "org.apache.kafka.common.TopicPartition",
            String.class.getName(),
            "long",
            "short",
            "int",
            "scala.Function1",
            "org.apache.kafka.server.transaction.AddPartitionsToTxnManager$TransactionSupportedOperation");

    /**
     * @return the line's transaction verification entry point: {@code kafka.server.AddPartitionsToTxnManager}'s
     *     {@code verifyTransaction} (3.8–3.9) or {@code addOrVerifyTransaction} (4.0), or
     *     {@code org.apache.kafka.server.transaction.AddPartitionsToTxnManager.addOrVerifyTransaction} (4.1+), with
     *     its parameter types
     */
    protected abstract HookPoint transactionVerification();

    /**
     * @return the line's {@code ReplicaManager} method that starts the verification of one partition for a caller with
     *     its own callback (the group coordinator's transactional offset commits): {@code
     *     maybeStartTransactionVerificationForPartition} (3.8–3.9) or {@code maybeSendPartitionToTransactionCoordinator}
     *     (4.0+), public, with its parameter types; its callback (argument 5) is the one {@code generalizedCallback$1}
     *     invokes
     */
    protected abstract HookPoint partitionVerification();

    /**
     * @return the setter of the request's {@code callbackRequestCompleteTimeNanos}: the Scala
     *     {@code callbackRequestCompleteTimeNanos_$eq(scala.Option)} up to 4.3, the Java
     *     {@code callbackRequestCompleteTimeNanos(java.util.OptionalLong)} of {@code org.apache.kafka.network.Request}
     *     in 4.4
     */
    protected abstract HookPoint callbackCompletion();

    /**
     * Creates the model; called on activation (and deactivation), after the hook points were checked.
     *
     * @return the version's request and response model
     */
    protected abstract RequestModel createModel();

    /**
     * The broker's topic-name lookup, from {@code KafkaApis.metadataCache()} (whose type differs between lines: the
     * Scala trait {@code kafka.server.MetadataCache} up to 4.0, {@code org.apache.kafka.metadata.MetadataCache} from
     * 4.1). Works in KRaft and ZooKeeper mode: the cache is the broker's own. Thread: a request handler, once.
     *
     * @param apis the broker's {@code KafkaApis}
     * @return topic id to topic name, {@code null} for an id the broker does not know; callable from any thread
     */
    protected abstract TopicNames topicNames(KafkaApis apis);

    /**
     * The size of the broker's produce purgatory, from {@code ReplicaManager.delayedProducePurgatory().numDelayed()}
     * (the Scala {@code kafka.server.DelayedOperationPurgatory} up to 3.9, the Java
     * {@code org.apache.kafka.server.purgatory.DelayedOperationPurgatory} from 4.0). Thread: a request handler, once.
     *
     * @param apis the broker's {@code KafkaApis}
     * @return the number of delayed produce requests now; callable from any thread
     */
    protected abstract IntSupplier delayedProduceRequests(KafkaApis apis);

    @Override
    public final String versionLine() {
        return versionLine;
    }

    /**
     * The hook list: every broker method kpipe advises, with its advice. Written once; {@link #hookPoints()} checks
     * these very methods and {@link #advise} installs on them.
     *
     * @return the advised methods, in installation order
     */
    public final List<AdvisedMethod> advisedMethods() {
        return List.of(
                new AdvisedMethod(HookPoint.method(PROCESSOR, "processNewResponses"), ProcessorAdvice.Round.class),
                new AdvisedMethod(HookPoint.method(PROCESSOR, "dequeueResponse"), ProcessorAdvice.Dequeue.class),
                new AdvisedMethod(
                        HookPoint.method(PROCESSOR, "updateRequestMetrics", responseClass),
                        ProcessorAdvice.Completed.class),
                new AdvisedMethod(
                        HookPoint.method(PROCESSOR, "handleChannelMuteEvent", String.class.getName(), MUTE_EVENT),
                        ProcessorAdvice.MuteEventHook.class),
                new AdvisedMethod(
                        HookPoint.method(PROCESSOR, "tryUnmuteChannel", String.class.getName()),
                        ProcessorAdvice.TryUnmute.class),
                new AdvisedMethod(
                        HookPoint.method(PROCESSOR, "close", String.class.getName()), ProcessorAdvice.Close.class),
                new AdvisedMethod(
                        HookPoint.method(PROCESSOR, "processDisconnected"), ProcessorAdvice.Disconnected.class),
                new AdvisedMethod(
                        HookPoint.method(PROCESSOR, "processCompletedReceives"), ProcessorAdvice.Receives.class),
                new AdvisedMethod(
                        HookPoint.method(REQUEST_CHANNEL, "sendRequest", requestClass), RequestChannelAdvice.class),
                new AdvisedMethod(
                        HookPoint.method(KAFKA_APIS, "handle", requestClass, requestLocalClass), KafkaApisAdvice.class),
                new AdvisedMethod(
                        HookPoint.method(
                                KAFKA_CHANNEL,
                                "maybeBeginServerReauthentication",
                                "org.apache.kafka.common.network.NetworkReceive",
                                "java.util.function.Supplier"),
                        KafkaChannelAdvice.class),
                new AdvisedMethod(HookPoint.method(KAFKA_CHANNEL, "read"), KafkaChannelReadAdvice.class));
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
     * @return the advised methods of deferred dispatch through a {@code CallbackRequest}
     */
    public final List<AdvisedMethod> callbackRequestMethods() {
        return List.of(
                new AdvisedMethod(transactionVerification(), AppendAdvice.Verification.class),
                new AdvisedMethod(
                        HookPoint.method(
                                REQUEST_HANDLER_OBJECT,
                                "$anonfun$wrapAsyncCallback$2",
                                requestClass,
                                "scala.Function2",
                                requestLocalClass,
                                REQUEST_CHANNEL,
                                Object.class.getName()),
                        AppendAdvice.CallbackInvoked.class),
                new AdvisedMethod(callbackCompletion(), AppendAdvice.CallbackCompleted.class));
    }

    /**
     * The hooks of deferred dispatch through a verification callback (KIP-848's group coordinator runtime: a
     * TXN_OFFSET_COMMIT's write is enqueued by the callback of its partition's verification, on the thread that
     * completes it): the line's {@link #partitionVerification()} (the callback it is given) and
     * {@code ReplicaManager.generalizedCallback$1(Tuple2, Function1, TopicPartition)}, the private method that
     * invokes that callback, the same on every line (3.8–4.4, {@code javap -p}).
     *
     * @return the advised methods of deferred dispatch through a verification callback
     */
    public final List<AdvisedMethod> verificationCallbackMethods() {
        return List.of(
                new AdvisedMethod(partitionVerification(), AppendAdvice.PartitionVerification.class),
                new AdvisedMethod(
                        HookPoint.method(
                                REPLICA_MANAGER,
                                "generalizedCallback$1",
                                "scala.Tuple2",
                                "scala.Function1",
                                "org.apache.kafka.common.TopicPartition"),
                        AppendAdvice.VerificationCallbackReturned.class));
    }

    /**
     * @return per API, the methods that report its deferred dispatch: PRODUCE through a {@code CallbackRequest};
     *     TXN_OFFSET_COMMIT through a {@code CallbackRequest} (classic coordinator) or a verification callback
     *     (KIP-848's coordinator runtime), so both
     */
    public final Map<ApiKeys, List<AdvisedMethod>> deferredDispatchMethods() {
        List<AdvisedMethod> both = new ArrayList<>(callbackRequestMethods());
        both.addAll(verificationCallbackMethods());
        Map<ApiKeys, List<AdvisedMethod>> m = new EnumMap<>(ApiKeys.class);
        m.put(ApiKeys.PRODUCE, callbackRequestMethods());
        m.put(ApiKeys.TXN_OFFSET_COMMIT, List.copyOf(both));
        return m;
    }

    @Override
    public final Map<ApiKeys, List<HookPoint>> deferredDispatchHookPoints() {
        Map<ApiKeys, List<HookPoint>> m = new EnumMap<>(ApiKeys.class);
        deferredDispatchMethods()
                .forEach((api, methods) ->
                        m.put(api, methods.stream().map(AdvisedMethod::method).toList()));
        return m;
    }

    @Override
    public final void deferredDispatch(Set<ApiKeys> apis) {
        deferredDispatch = Set.copyOf(apis);
    }

    @Override
    public final Set<ApiKeys> deferredDispatch() {
        return deferredDispatch;
    }

    /**
     * @return what {@link #advise} installs: {@link #advisedMethods()}, and the deferred-dispatch hooks of the APIs
     *     that have them, each method once
     */
    private List<AdvisedMethod> installedMethods() {
        Map<String, AdvisedMethod> all = new LinkedHashMap<>();
        for (AdvisedMethod m : advisedMethods()) {
            all.put(m.method().toString(), m);
        }
        Set<ApiKeys> apis = deferredDispatch;
        deferredDispatchMethods().forEach((api, methods) -> {
            if (apis.contains(api)) {
                for (AdvisedMethod m : methods) {
                    all.putIfAbsent(m.method().toString(), m);
                }
            }
        });
        return List.copyOf(all.values());
    }

    /** @return the broker members the core calls or reads (not advised), the same on every line */
    private static List<HookPoint> accessedMembers() {
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
                HookPoint.method("org.apache.kafka.common.network.Selector", "channel", String.class.getName()));
    }

    @Override
    public final List<HookPoint> hookPoints() {
        List<HookPoint> points = new ArrayList<>();
        for (AdvisedMethod m : advisedMethods()) {
            points.add(m.method());
        }
        points.addAll(accessedMembers());
        points.addAll(versionHookPoints());
        return Collections.unmodifiableList(points);
    }

    @Override
    public final List<String> transformedClasses() {
        return List.copyOf(byClass().keySet());
    }

    private Map<String, List<AdvisedMethod>> byClass() {
        Map<String, List<AdvisedMethod>> byClass = new LinkedHashMap<>();
        for (AdvisedMethod m : installedMethods()) {
            byClass.computeIfAbsent(m.className(), c -> new ArrayList<>()).add(m);
        }
        return byClass;
    }

    @Override
    public final AgentBuilder advise(AgentBuilder builder) {
        AgentBuilder b = builder;
        for (Map.Entry<String, List<AdvisedMethod>> type : byClass().entrySet()) {
            List<AdvisedMethod> methods = type.getValue();
            b = b.type(named(type.getKey())).transform((dynamicType, description, loader, module, domain) -> {
                DynamicType.Builder<?> t = dynamicType;
                for (AdvisedMethod m : methods) {
                    t = t.visit(Advice.to(m.advice()).on(m.matcher()));
                }
                return t;
            });
        }
        return b;
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
    public final void activate() {
        Hooks.activate(createModel(), this, deferredDispatch);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[Kafka " + versionLine + ", " + requestClass + "]";
    }
}
