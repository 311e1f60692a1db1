// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import dev.kpipe.spi.BrokerCapabilities;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.Nexus;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.utility.JavaModule;
import org.apache.kafka.common.protocol.ApiKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Installs kpipe's advice into the running broker, once per JVM; each broker of the JVM then has its own {@link
 * BrokerHooks}.
 *
 * <p>Steps: pick the binding for the running Kafka version line; check every hook point it needs by
 * reflection (loading, not initializing, the broker classes); check the optional hook points of deferred dispatch
 * per API (KIP-890 verified writes) and tell the listener for which APIs it has them; retransform the broker classes with
 * the binding's advice; check that every class was transformed, and undo everything if one was
 * not. Until {@link #install} succeeds the broker is untouched.
 */
public final class Interceptor {
    private static final Logger LOG = LoggerFactory.getLogger(Interceptor.class);

    /** The JVM-level fallback: throwables caught by hooks that did not know their broker yet. */
    private static final AtomicLong UNATTRIBUTED_HOOK_FAULTS = new AtomicLong();

    /**
     * The binding class of each supported Kafka version line ({@code major.minor}). Bindings are loaded by name: each
     * is in its own module ({@code interceptor-kafka-<oldest line served>}), compiled against the oldest line it
     * serves, and all are shaded into the plugin jar. Grouped by what {@code javap} shows differs in the hooked
     * members: 3.8–3.9 ({@code kafka.server.RequestLocal}, Scala purgatory and metadata cache), 4.0 ({@code
     * org.apache.kafka.server.common.RequestLocal}, Java purgatory, Scala metadata cache), 4.1–4.3 (Java metadata
     * cache), 4.4 (Java {@code org.apache.kafka.network.Request}/{@code Response}).
     */
    private static final Map<String, String> BINDINGS;

    static {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("3.8", "dev.kpipe.interceptor.v3_8.Binding38");
        m.put("3.9", "dev.kpipe.interceptor.v3_8.Binding38");
        m.put("4.0", "dev.kpipe.interceptor.v4_0.Binding40");
        m.put("4.1", "dev.kpipe.interceptor.v4_1.Binding41");
        m.put("4.2", "dev.kpipe.interceptor.v4_1.Binding41");
        m.put("4.3", "dev.kpipe.interceptor.v4_1.Binding41");
        m.put("4.4", "dev.kpipe.interceptor.v4_4.Binding44");
        BINDINGS = Collections.unmodifiableMap(m);
    }

    private Interceptor() {}

    /** A Kafka version line's binding: its hook points and its advice. */
    public interface Binding {
        /** @return the Kafka version line(s) it serves, e.g. {@code 4.4} or {@code 4.1-4.3} */
        String versionLine();

        /** @return every broker member the advice and the network processors ({@code KafkaNetworkProcessor}) use */
        List<HookPoint> hookPoints();

        /** @return the names of the broker classes the advice transforms */
        List<String> transformedClasses();

        /**
         * @return per API, the hook points that report its deferred dispatch (when a verified transactional write
         *     happened, KIP-890): optional, checked at install like the others; the APIs whose points all exist are
         *     passed to {@link #deferredDispatch(Set)} and the listener is told ({@code onInstalled})
         */
        default Map<ApiKeys, List<HookPoint>> deferredDispatchHookPoints() {
            return Map.of();
        }

        /**
         * Keeps the deferred-dispatch hooks of these APIs only in {@link #advise} and {@link #transformedClasses()};
         * install only.
         *
         * @param apis the APIs whose hook points exist
         */
        default void deferredDispatch(Set<ApiKeys> apis) {}

        /** @return the APIs whose deferred-dispatch hooks are installed with the others */
        default Set<ApiKeys> deferredDispatch() {
            return Set.of();
        }

        /**
         * @param builder an agent builder configured for retransformation
         * @return the builder with this binding's advice
         */
        AgentBuilder advise(AgentBuilder builder);

        /**
         * Links the binding's own accessors of broker internals (method handles on private members), after {@link
         * #hookPoints()} were found: a member whose type differs fails here, at install, not later on a network
         * thread. Thread: the installing thread.
         *
         * @throws UnsupportedBrokerException if an accessor cannot be linked
         */
        default void link() throws UnsupportedBrokerException {}

        /**
         * Readies the advice (the line's request model, the deferred-dispatch APIs) before it is installed; each
         * broker's listener is found later through its {@link BrokerHooks}. Install only.
         */
        void activate();
    }

    /**
     * Picks the binding for a Kafka version by its version line ({@code major.minor}): {@code v3_8} for 3.8.x and
     * 3.9.x (KRaft or ZooKeeper mode), {@code v4_0} for 4.0.x, {@code v4_1} for 4.1.x to 4.3.x (all with the Scala
     * {@code kafka.network.RequestChannel$Request}), {@code v4_4} for 4.4.x (Java {@code
     * org.apache.kafka.network.Request}). Does not check the hook points (see {@link #install}). Thread: any.
     *
     * @param version a Kafka version, e.g. {@code 4.4.0}
     * @return the binding for its version line
     * @throws UnsupportedBrokerException if kpipe has no binding for it, or its binding is missing from the jar
     */
    public static Binding bindingFor(String version) throws UnsupportedBrokerException {
        String className = BINDINGS.get(versionLine(version));
        if (className == null) {
            throw new UnsupportedBrokerException(
                    "kpipe does not support Kafka " + version + " (supported: " + supportedVersions() + ")");
        }
        try {
            return Class.forName(className, true, Interceptor.class.getClassLoader())
                    .asSubclass(Binding.class)
                    .getDeclaredConstructor()
                    .newInstance();
        } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
            throw new UnsupportedBrokerException("kpipe cannot hook Kafka " + version + ": its binding " + className
                    + " is missing from the kpipe jar or cannot be loaded (" + e + ")");
        }
    }

    /** @return the supported version lines, e.g. {@code 3.8.x, 3.9.x, 4.0.x, ...} */
    public static String supportedVersions() {
        return String.join(
                ", ", BINDINGS.keySet().stream().map(line -> line + ".x").toList());
    }

    /** @return {@code major.minor} of a version such as {@code 4.4.0} or {@code 4.4.0-SNAPSHOT}, else the input */
    static String versionLine(String version) {
        String[] parts = version.split("\\.", 3);
        return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
    }

    /** What {@link #install} did, once per JVM. */
    public record Installation(Binding binding, BrokerCapabilities capabilities) {}

    /** Gives a broker that has no kpipe reporter its hooks ({@link #attachEveryBroker}). */
    @FunctionalInterface
    public interface BrokerAttach {
        /**
         * Thread: the broker's first network thread to run a round (or request handler), holding the monitor of the
         * broker's metrics registry; must not throw.
         *
         * @param metrics the broker's metrics registry (a reporter added to it is closed with the broker)
         * @param brokerConfig the broker's own configuration ({@code KafkaConfig.originals()})
         * @return the broker's hooks, or {@code null} to leave the broker classic
         */
        BrokerHooks attach(org.apache.kafka.common.metrics.Metrics metrics, Map<String, ?> brokerConfig);
    }

    private static Installation installation;
    private static UnsupportedBrokerException installFailure;
    private static volatile BrokerAttach everyBroker;
    private static final java.util.concurrent.atomic.AtomicInteger BROKERS_GENERATION =
            new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Checks the hook points of the running broker and installs the advice, once per JVM: a later call returns the
     * first call's installation (or throws its failure again) without touching the broker. The advice then finds each
     * broker's {@link BrokerHooks} from the broker's own objects. Thread: any; serialised.
     *
     * @param inst the instrumentation (self-attached, or from {@code -javaagent})
     * @param loader the broker's class loader
     * @return the installation: the binding and what the broker offers ({@link BrokerCapabilities}), to be given to
     *     each broker's listener ({@code onInstalled})
     * @throws UnsupportedBrokerException if the version is not supported or a hook point is missing;
     *     the broker is unchanged then
     */
    public static synchronized Installation install(Instrumentation inst, ClassLoader loader)
            throws UnsupportedBrokerException {
        if (installation != null) {
            return installation;
        }
        if (installFailure != null) {
            throw installFailure;
        }
        try {
            installation = installOnce(inst, loader);
            return installation;
        } catch (UnsupportedBrokerException e) {
            installFailure = e;
            throw e;
        }
    }

    /** @return the installation, or {@code null} while the advice is not installed; thread: any */
    public static synchronized Installation installation() {
        return installation;
    }

    private static Installation installOnce(Instrumentation inst, ClassLoader loader)
            throws UnsupportedBrokerException {
        String version = KafkaVersion.of(loader);
        Binding binding = bindingFor(version);
        List<String> missing = HookPoint.missing(loader, binding.hookPoints());
        if (!missing.isEmpty()) {
            throw new UnsupportedBrokerException(
                    "kpipe cannot hook Kafka " + version + ": missing hook point(s) " + missing);
        }
        binding.link();
        Set<ApiKeys> deferrable = EnumSet.noneOf(ApiKeys.class);
        List<String> missingDeferred = new ArrayList<>();
        for (Map.Entry<ApiKeys, List<HookPoint>> api :
                binding.deferredDispatchHookPoints().entrySet()) {
            List<String> missingForApi = HookPoint.missing(loader, api.getValue());
            if (missingForApi.isEmpty()) {
                deferrable.add(api.getKey());
            } else {
                missingDeferred.add(api.getKey() + " " + missingForApi);
            }
        }
        binding.deferredDispatch(deferrable);
        if (!missingDeferred.isEmpty()) {
            LOG.warn("kpipe: Kafka {} lacks the hook points of deferred dispatch for {}", version, missingDeferred);
        }
        BrokerCapabilities capabilities = new BrokerCapabilities(version, deferrable);
        if (!inst.isRetransformClassesSupported()) {
            throw new UnsupportedBrokerException(
                    "kpipe cannot hook Kafka " + version + ": the JVM does not support class retransformation");
        }
        List<String> transformed = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        disableNexus();
        // Byte Buddy ignores synthetic methods by default; one hook (the wrapped callback of
        // KafkaRequestHandler.wrapAsyncCallback, a Scala lambda body) is synthetic. The matchers name every advised
        // method exactly, so ignoring none adds no other method.
        AgentBuilder builder = new AgentBuilder.Default(new ByteBuddy().ignore(ElementMatchers.none()))
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
                .with(new AgentBuilder.Listener.Adapter() {
                    @Override
                    public void onTransformation(
                            TypeDescription type,
                            ClassLoader cl,
                            JavaModule module,
                            boolean loaded,
                            DynamicType dynamicType) {
                        synchronized (transformed) {
                            transformed.add(type.getName());
                        }
                    }

                    @Override
                    public void onError(
                            String typeName, ClassLoader cl, JavaModule module, boolean loaded, Throwable throwable) {
                        synchronized (errors) {
                            errors.add(typeName + ": " + throwable);
                        }
                    }
                });
        // Activate before transforming, so that no transformed method ever runs without its model.
        binding.activate();
        ResettableClassFileTransformer transformer = binding.advise(builder).installOn(inst);
        List<String> notTransformed = new ArrayList<>(binding.transformedClasses());
        synchronized (transformed) {
            notTransformed.removeAll(transformed);
        }
        if (!errors.isEmpty() || !notTransformed.isEmpty()) {
            transformer.reset(inst, AgentBuilder.RedefinitionStrategy.RETRANSFORMATION);
            throw new UnsupportedBrokerException("kpipe cannot hook Kafka " + version + ": not transformed "
                    + notTransformed + (errors.isEmpty() ? "" : ", errors " + errors));
        }
        return new Installation(binding, capabilities);
    }

    /**
     * Gives every broker of this JVM whose {@code metric.reporters} has no kpipe its own kpipe ({@code -javaagent}
     * with JVM-wide {@code kpipe.*} settings: in-process brokers of a test harness). Thread: any.
     *
     * @param attach makes a broker's kpipe, or {@code null} to attach none
     */
    public static void attachEveryBroker(BrokerAttach attach) {
        everyBroker = attach;
        brokersChanged();
    }

    /** @return the JVM-wide attach, or {@code null}; thread: any */
    public static BrokerAttach everyBroker() {
        return everyBroker;
    }

    /**
     * Tells the advice that a broker's hooks changed (a broker's kpipe started, stopped, or was attached): threads
     * that found no kpipe for their broker look again at their next hook. Thread: any.
     */
    public static void brokersChanged() {
        BROKERS_GENERATION.incrementAndGet();
    }

    /** @return a number that changes whenever {@link #brokersChanged} is called; thread: any, one volatile read */
    public static int brokersGeneration() {
        return BROKERS_GENERATION.get();
    }

    /**
     * Turns off Byte Buddy's {@link Nexus} before the first {@link AgentBuilder.Default} is made. Its constructor
     * prepares the Nexus (type initializers injected into the system class loader) even though kpipe never uses it
     * ({@code InitializationStrategy.NoOp} below), and that injection calls {@code sun.misc.Unsafe}, which JDK 24 and
     * later report on the broker's standard error (JEP 498: "A terminally deprecated method in sun.misc.Unsafe has been
     * called"). {@link Nexus#PROPERTY} is Byte Buddy's own switch for this; in the drop-in jar its name is relocated
     * with Byte Buddy ({@code dev.kpipe.shaded.net.bytebuddy.nexus.disabled}), so it touches only kpipe's copy. A
     * value already set is kept. Thread: any.
     */
    static void disableNexus() {
        if (System.getProperty(Nexus.PROPERTY) == null) {
            System.setProperty(Nexus.PROPERTY, "true");
        }
    }

    /**
     * Counts a throwable a hook caught before it knew its broker (finding the broker itself failed, or the advice's own
     * exception handler ran on a thread the hooks have not seen yet); a hook that knows its broker counts on the
     * broker's {@link HookCounters} instead ({@link HookCounters#faultOn(BrokerHooks)}). Thread: any.
     */
    public static void unattributedHookFault() {
        UNATTRIBUTED_HOOK_FAULTS.incrementAndGet();
    }

    /**
     * @return the throwables caught so far by hooks that did not know their broker: the JVM-level fallback, not any
     *     one broker's (each broker's kpipe adds it to its {@code plugin-fault-total}, so that none is lost); thread:
     *     any
     */
    public static long unattributedHookFaults() {
        return UNATTRIBUTED_HOOK_FAULTS.get();
    }
}
