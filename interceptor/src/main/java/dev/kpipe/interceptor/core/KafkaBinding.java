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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.bytecode.member.MethodInvocation;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * A Kafka line's binding, made from its {@link KafkaLine} (the names that differ between lines) and the hook list
 * ({@link HookList}, the same for every line): checks the running broker against those very members and installs the
 * advice on them ({@link #advise}). The core is compiled against the oldest line (3.8.1), so it names no member whose
 * type differs between lines.
 *
 * <p>A subclass, one per line in its own module compiled against the oldest line it serves, gives its
 * {@link KafkaLine} and the two calls whose types differ: its metadata cache's topic-name lookup and its produce
 * purgatory's size.
 *
 * <p>Instances are immutable but for {@link #deferredDispatch(Set)}, which the install calls, if at all, before
 * anything else; {@link #activate} is called on the installing thread.
 */
public abstract class KafkaBinding implements Interceptor.Binding {

    /**
     * @return what the advice does with a throwable of its own (none should reach it: the hooks catch their own):
     *     {@link Hooks#adviceThrew} lets a {@link VirtualMachineError} through and counts any other
     */
    static Advice.ExceptionHandler adviceFaults() {
        try {
            return new Advice.ExceptionHandler.Simple(MethodInvocation.invoke(
                    new MethodDescription.ForLoadedMethod(Hooks.class.getMethod("adviceThrew", Throwable.class))));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    private final KafkaLine line;
    /**
     * The APIs whose deferred-dispatch hooks are installed: every API of {@link HookList#deferredDispatch} until
     * {@link #deferredDispatch(Set)} narrows it before install.
     */
    private volatile Set<ApiKeys> deferredDispatch;

    /** @param line the line's names */
    protected KafkaBinding(KafkaLine line) {
        this.line = line;
        this.deferredDispatch = Set.copyOf(HookList.deferredDispatch(line).keySet());
    }

    /**
     * The broker's topic-name lookup, from {@code KafkaApis.metadataCache()} (of type {@link
     * KafkaLine#metadataCache()}). Works in KRaft and ZooKeeper mode: the cache is the broker's own. Thread: a request
     * handler, once.
     *
     * @param apis the broker's {@code KafkaApis}
     * @return topic id to topic name, {@code null} for an id the broker does not know; callable from any thread
     */
    protected abstract TopicNames topicNames(KafkaApis apis);

    /**
     * The size of the broker's produce purgatory, from {@code ReplicaManager.delayedProducePurgatory().numDelayed()}
     * (of type {@link KafkaLine#purgatory()}). Thread: a request handler, once.
     *
     * @param apis the broker's {@code KafkaApis}
     * @return the number of delayed produce requests now; callable from any thread
     */
    protected abstract IntSupplier delayedProduceRequests(KafkaApis apis);

    /** @return the line's names */
    public final KafkaLine line() {
        return line;
    }

    @Override
    public final String versionLine() {
        return line.versionLine();
    }

    /**
     * The hook list: every broker method kpipe always advises, with its advice. {@link #hookPoints()} checks these
     * very methods and {@link #advise} installs on them.
     *
     * @return the advised methods, in installation order
     */
    public final List<AdvisedMethod> advisedMethods() {
        return HookList.advised(line);
    }

    /** @return per API, the methods that report its deferred dispatch ({@link HookList#deferredDispatch}) */
    public final Map<ApiKeys, List<AdvisedMethod>> deferredDispatchMethods() {
        return HookList.deferredDispatch(line);
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

    /**
     * @return the advised methods, the members the core reaches ({@link HookList#accessed()}) and the line's own
     *     ({@link KafkaLine#ownMembers()}), in that order
     */
    @Override
    public final List<HookPoint> hookPoints() {
        List<HookPoint> points = new ArrayList<>();
        for (AdvisedMethod m : advisedMethods()) {
            points.add(m.method());
        }
        points.addAll(HookList.accessed());
        points.addAll(line.ownMembers());
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
        Advice.ExceptionHandler faults = adviceFaults();
        for (Map.Entry<String, List<AdvisedMethod>> type : byClass().entrySet()) {
            List<AdvisedMethod> methods = type.getValue();
            b = b.type(named(type.getKey())).transform((dynamicType, description, loader, module, domain) -> {
                DynamicType.Builder<?> t = dynamicType;
                for (AdvisedMethod m : methods) {
                    t = t.visit(
                            Advice.to(m.advice()).withExceptionHandler(faults).on(m.matcher()));
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
            throw new UnsupportedBrokerException("kpipe cannot hook Kafka " + line.versionLine()
                    + ": KafkaChannel's re-authentication state is not as expected (" + cause + ")");
        }
    }

    @Override
    public final void activate() {
        Hooks.activate(line.requests().model().get(), this, deferredDispatch);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[Kafka " + line.versionLine() + ", "
                + line.requests().request() + "]";
    }
}
