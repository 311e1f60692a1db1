// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.interceptor.BrokerHooks;
import dev.kpipe.interceptor.Interceptor;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.Map;
import kafka.network.Processor;
import kafka.server.KafkaApis;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;

/**
 * Finds the broker a hooked object belongs to: a {@code kafka.network.Processor} and a {@code kafka.server.KafkaApis}
 * both hold their broker's {@link Metrics} ({@code metrics}, a private field of the processor and a public accessor of
 * {@code KafkaApis}, 3.8 to 4.4), and the broker adds its {@code metric.reporters} to it; the reporter that is a
 * {@link BrokerHooks.Owner} gives the broker's hooks. Where none is, the JVM-wide attach ({@link
 * Interceptor#attachEveryBroker}), if set, gives the broker one, configured from the broker's {@code KafkaConfig}.
 *
 * <p>Threads: network and request handler threads, once per thread and broker (the callers cache the answer until
 * {@link Interceptor#brokersChanged} says a broker's hooks changed). Scanning the reporters takes the registry's
 * monitor, as {@link Metrics#addReporter} does.
 */
final class Brokers {

    private static final MethodHandle PROCESSOR_METRICS;
    private static final MethodHandle PROCESSOR_CONFIG;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(Processor.class, MethodHandles.lookup());
            PROCESSOR_METRICS = lookup.findGetter(Processor.class, "metrics", Metrics.class);
            PROCESSOR_CONFIG = lookup.findGetter(Processor.class, "config", KafkaConfig.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Brokers() {}

    /**
     * @param processor a broker's network processor
     * @return its broker's hooks, or {@code null} if its broker runs without kpipe
     */
    static BrokerHooks of(Processor processor) {
        try {
            return of((Metrics) PROCESSOR_METRICS.invoke(processor), (KafkaConfig) PROCESSOR_CONFIG.invoke(processor));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("kpipe: cannot read the processor's broker", t);
        }
    }

    /**
     * @param apis a broker's request handler
     * @return its broker's hooks, or {@code null} if its broker runs without kpipe
     */
    static BrokerHooks of(KafkaApis apis) {
        return of(apis.metrics(), apis.config());
    }

    private static BrokerHooks of(Metrics metrics, KafkaConfig config) {
        if (metrics == null) {
            return null;
        }
        BrokerHooks.Owner owner = owner(metrics);
        if (owner != null) {
            return owner.brokerHooks();
        }
        Interceptor.BrokerAttach attach = Interceptor.everyBroker();
        if (attach == null) {
            return null;
        }
        synchronized (metrics) { // one attach per broker, whichever of its threads comes first
            owner = owner(metrics);
            return owner != null ? owner.brokerHooks() : attach.attach(metrics, originals(config));
        }
    }

    private static Map<String, ?> originals(KafkaConfig config) {
        return config == null ? Map.of() : config.originals();
    }

    /**
     * @return the broker's kpipe reporter (the first if several), whether or not it pipelines now ({@code
     *     kpipe.enable=false} at start: its hooks come later, or never), or {@code null} if it has none
     */
    private static BrokerHooks.Owner owner(Metrics metrics) {
        synchronized (metrics) {
            for (MetricsReporter r : metrics.reporters()) {
                if (r instanceof BrokerHooks.Owner owner) {
                    return owner;
                }
            }
        }
        return null;
    }
}
