// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.management.ObjectName;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One kpipe per broker, several in a JVM: each runtime has its own coordinator and metrics, the first keeps the plain
 * JMX names and the others add their node id, and closing one turns its pipelining off and frees its names (without a broker:
 * the hooks are a stand-in; {@code in-process-tests} runs real brokers).
 */
class BrokerLifecycleTest {

    /** Stands in for the interceptor: records installs. */
    private static final class Hooks implements HookInstaller {
        final List<PipelineCoordinator<Object, Object>> installed = new ArrayList<>();
        final List<dev.kpipe.spi.NetworkEventListener<Object, Object>> observed = new ArrayList<>();
        final List<HookCounters> counters = new ArrayList<>();

        @Override
        public String install(
                KpipeConfig config,
                PipelineCoordinator<Object, Object> coordinator,
                List<dev.kpipe.spi.NetworkEventListener<Object, Object>> observers,
                HookCounters hookCounters) {
            installed.add(coordinator);
            observed.addAll(observers);
            counters.add(hookCounters);
            return "install mode test";
        }
    }

    /** An observing listener of the SPI, as an operator names one in {@code kpipe.spi.observer.classes}. */
    public static final class Observer
            implements dev.kpipe.spi.NetworkEventListener<Object, Object>,
                    org.apache.kafka.common.Configurable,
                    AutoCloseable {
        Object nodeId;
        int closes;

        @Override
        public void configure(Map<String, ?> configs) {
            nodeId = configs.get("node.id");
        }

        @Override
        public void close() {
            closes++;
        }
    }

    private final List<KpipeRuntime> runtimes = new ArrayList<>();

    @AfterEach
    void closeAll() {
        runtimes.forEach(KpipeRuntime::close);
    }

    private KpipeRuntime broker(Hooks hooks, String nodeId, String... keyValues) {
        Map<String, Object> config = new HashMap<>();
        config.put("node.id", nodeId);
        config.put("kpipe.enable", "true");
        for (int i = 0; i < keyValues.length; i += 2) {
            config.put(keyValues[i], keyValues[i + 1]);
        }
        KpipeRuntime runtime = new KpipeRuntime(hooks, "4.4.0", Runnable::run, nodeId);
        runtimes.add(runtime);
        runtime.start(new KpipeConfig(config));
        return runtime;
    }

    private static Set<ObjectName> names(String type) throws Exception {
        return ManagementFactory.getPlatformMBeanServer()
                .queryNames(new ObjectName("kafka.server:type=" + type + ",*"), null);
    }

    @Test
    void eachBrokerHasItsOwnKpipeAndTheFirstKeepsThePlainNames() throws Exception {
        Hooks one = new Hooks();
        Hooks two = new Hooks();
        KpipeRuntime first = broker(one, "1");
        KpipeRuntime second = broker(two, "2", "kpipe.max.inflight.requests.per.connection", "3");

        assertEquals(1, one.installed.size());
        assertEquals(1, two.installed.size());
        assertFalse(one.installed.get(0) == two.installed.get(0), "a coordinator per broker");
        assertEquals(16, first.coordinator().limits().maxRequests());
        assertEquals(3, second.coordinator().limits().maxRequests(), "the second broker's own limit");
        assertEquals(
                Set.of(
                        new ObjectName("kafka.server:type=kpipe-metrics"),
                        new ObjectName("kafka.server:type=kpipe-metrics,node-id=2")),
                names("kpipe-metrics"));
        assertEquals(
                Set.of(
                        new ObjectName("kafka.server:type=kpipe-connections"),
                        new ObjectName("kafka.server:type=kpipe-connections,node-id=2")),
                names("kpipe-connections"));

        first.close();
        assertFalse(one.installed.get(0).enabled(), "its pipelining off: its connections drain back to classic");
        assertTrue(two.installed.get(0).enabled(), "the other broker pipelines on");
        assertEquals(Set.of(new ObjectName("kafka.server:type=kpipe-metrics,node-id=2")), names("kpipe-metrics"));
        first.close(); // once only: nothing more happens

        KpipeRuntime third = broker(new Hooks(), "3");
        assertTrue(names("kpipe-metrics").contains(new ObjectName("kafka.server:type=kpipe-metrics")), "name freed");
        assertTrue(third.coordinator() != null);
    }

    @Test
    void eachBrokerCountsItsOwnHookFaultsAndOrphanedReceives() {
        Hooks one = new Hooks();
        Hooks two = new Hooks();
        KpipeRuntime first = broker(one, "1");
        KpipeRuntime second = broker(two, "2");
        assertFalse(one.counters.get(0) == two.counters.get(0), "hook counters per broker");

        one.counters.get(0).fault(); // as a hook of broker 1 that caught a throwable
        one.counters.get(0).orphanedReceives(2);

        long jvm = Interceptor.unattributedHookFaults(); // the fallback, on both
        assertEquals(1.0 + jvm, metric(first, "plugin-fault-total"));
        assertEquals(0.0 + jvm, metric(second, "plugin-fault-total"), "broker 1's fault is not broker 2's");
        assertEquals(2.0, metric(first, "orphaned-receive-total"));
        assertEquals(0.0, metric(second, "orphaned-receive-total"));
    }

    private static double metric(KpipeRuntime runtime, String name) {
        return runtime.metrics().registry().metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                .findFirst()
                .orElseThrow(() -> new AssertionError("no metric " + name));
    }

    @Test
    void eachBrokerMakesItsOwnObserversConfiguredWithItsConfigAndClosesThemWithIt() {
        Hooks one = new Hooks();
        Hooks two = new Hooks();
        String observers = Observer.class.getName() + "," + Observer.class.getName();
        KpipeRuntime first = broker(one, "1", KpipeConfig.SPI_OBSERVER_CLASSES, observers);
        broker(two, "2", KpipeConfig.SPI_OBSERVER_CLASSES, Observer.class.getName());

        assertEquals(2, one.observed.size(), "one instance per class named, in order");
        assertEquals(1, two.observed.size());
        Observer a = (Observer) one.observed.get(0);
        Observer b = (Observer) one.observed.get(1);
        Observer c = (Observer) two.observed.get(0);
        assertFalse(a == b || a == c, "no instance shared, not even between brokers");
        assertEquals(List.of("1", "1", "2"), List.of(a.nodeId, b.nodeId, c.nodeId), "each its broker's config");

        first.close();
        assertEquals(List.of(1, 1, 0), List.of(a.closes, b.closes, c.closes), "closed once, with its broker");
        first.close();
        assertEquals(1, a.closes);
    }

    @Test
    void withoutTheSettingThereAreNoObservers() {
        Hooks hooks = new Hooks();
        broker(hooks, "1");
        assertEquals(List.of(), hooks.observed);
    }

    @Test
    void aClosedBrokerTakesNoChangeAndStartsNothing() {
        Hooks hooks = new Hooks();
        KpipeRuntime runtime = new KpipeRuntime(hooks, "4.4.0", Runnable::run, "7");
        runtimes.add(runtime);
        runtime.close();
        runtime.start(new KpipeConfig(Map.of("node.id", "7", "kpipe.enable", "true")));
        runtime.reconfigure(new KpipeConfig(Map.of("node.id", "7", "kpipe.enable", "true")));
        assertEquals(List.of(), hooks.installed);
        assertNull(runtime.coordinator());
    }

    @Test
    void aBrokerThatCannotHaveKpipeGetsAReporterWithoutOneSoItsThreadsLookNoFurther() {
        try (Metrics registry = new Metrics()) {
            assertNull(KpipePlugin.attach(
                    registry,
                    Map.of("node.id", "5", "kpipe.enable", "true", "kpipe.max.inflight.requests.per.connection", "0")));
            assertNull(KpipePlugin.attach(registry, Map.of("node.id", "3000", "process.roles", "controller")));
            List<MetricsReporter> kpipes = registry.reporters().stream()
                    .filter(r -> r instanceof KpipePlugin)
                    .toList();
            assertEquals(2, kpipes.size(), "one placeholder per attach: the broker's threads find it");
            kpipes.forEach(k -> assertNull(((KpipePlugin) k).brokerHooks()));
            assertTrue(KpipePlugin.of(registry).isEmpty(), "no kpipe runs on it");
        }
    }

    @Test
    void theNodeIdIsNodeIdElseBrokerId() {
        assertEquals("3", KpipePlugin.nodeId(Map.of("node.id", "3", "broker.id", "9")));
        assertEquals("9", KpipePlugin.nodeId(Map.of("broker.id", 9)));
        assertEquals("?", KpipePlugin.nodeId(Map.of()));
        assertTrue(KpipePlugin.controllerOnly(Map.of("process.roles", "controller")));
        assertFalse(KpipePlugin.controllerOnly(Map.of("process.roles", "broker,controller")));
        assertFalse(KpipePlugin.controllerOnly(Map.of()));
    }
}
