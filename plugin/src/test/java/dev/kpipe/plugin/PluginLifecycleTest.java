// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.extension.ClassificationPolicy;
import dev.kpipe.extension.RegexClassificationPolicy;
import dev.kpipe.extension.StoragePressure;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.Configurable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The life of the extension instances kpipe makes ({@code kpipe.classification.policy.class}, {@code
 * kpipe.storage.pressure.class}), as docs/plugin-authors.md states it: one that implements {@link AutoCloseable} is
 * closed once, when a change of {@code kpipe.topics.*} replaces it, when the hooks cannot be installed, and when the
 * broker closes kpipe; a close that throws is logged at WARN and goes no further. Without a broker: {@link
 * KpipeRuntime} with a stand-in for the hooks, and {@link PluginInstances} alone.
 */
class PluginLifecycleTest {

    /** What the extensions below saw, in order: {@code "configure <name>"}, {@code "close <name>"}. */
    static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    /** A policy as a plugin author writes one: configured by the broker's settings, closeable. */
    public static final class ClosingPolicy implements ClassificationPolicy, Configurable, AutoCloseable {
        private String name;

        @Override
        public void configure(Map<String, ?> configs) {
            name = "policy(" + configs.get("kpipe.topics.exclude") + ")";
            EVENTS.add("configure " + name);
        }

        @Override
        public boolean pipelines(String topic) {
            return true;
        }

        @Override
        public void close() {
            EVENTS.add("close " + name);
            if (name.contains("bad-close")) {
                throw new IllegalStateException("close failed on purpose");
            }
        }
    }

    /** A storage pressure that owns a resource (a thread, an MBean) and releases it in close. */
    public static final class ClosingPressure implements StoragePressure, AutoCloseable {
        @Override
        public void close() {
            EVENTS.add("close pressure");
        }
    }

    private int installs;
    private UnsupportedBrokerException failure;
    private final KpipeRuntime runtime = new KpipeRuntime(
            (config, coordinator, observers, counters) -> {
                if (failure != null) {
                    throw failure;
                }
                installs++;
                return "install mode test";
            },
            "4.4.0",
            Runnable::run);

    @BeforeEach
    void clearEvents() {
        EVENTS.clear();
    }

    @AfterEach
    void unregisterMetrics() {
        runtime.closeMetrics();
    }

    private static KpipeConfig config(String exclude) {
        Map<String, Object> m = new HashMap<>();
        m.put("broker.id", "1");
        m.put(KpipeConfig.ENABLE, "true");
        m.put(KpipeConfig.CLASSIFICATION_POLICY_CLASS, ClosingPolicy.class.getName());
        m.put(KpipeConfig.STORAGE_PRESSURE_CLASS, ClosingPressure.class.getName());
        m.put(KpipeConfig.TOPICS_EXCLUDE, exclude);
        return new KpipeConfig(m);
    }

    @Test
    void aPolicyReplacedByAChangeOfTheTopicsIsClosedAfterItsSuccessorIsConfigured() {
        runtime.start(config("a"));
        assertEquals(List.of("configure policy(a)"), EVENTS);

        runtime.reconfigure(config("b"));
        assertEquals(List.of("configure policy(a)", "configure policy(b)", "close policy(a)"), EVENTS);

        runtime.reconfigure(config("b")); // no change: nothing replaced, nothing closed
        assertEquals(3, EVENTS.size());
    }

    @Test
    void closingKpipeClosesThePolicyAndTheStoragePressureOnce() {
        runtime.start(config("a"));
        runtime.close();
        assertEquals(List.of("configure policy(a)", "close policy(a)", "close pressure"), EVENTS);
        runtime.close();
        assertEquals(3, EVENTS.size(), "closed once");
    }

    @Test
    void aCloseThatThrowsNeverReachesTheBrokersThread() {
        runtime.start(config("bad-close"));
        assertDoesNotThrow(() -> runtime.reconfigure(config("c")));
        assertEquals(List.of("configure policy(bad-close)", "configure policy(c)", "close policy(bad-close)"), EVENTS);
        assertDoesNotThrow(runtime::close);
        assertTrue(EVENTS.containsAll(List.of("close policy(c)", "close pressure")), EVENTS.toString());
    }

    @Test
    void aBrokerThatCannotBeHookedClosesTheInstancesItMadeForNothing() {
        failure = new UnsupportedBrokerException("kpipe does not support Kafka 9.9.9");
        runtime.start(config("a"));
        assertNull(runtime.coordinator());
        assertEquals(List.of("configure policy(a)", "close policy(a)", "close pressure"), EVENTS);
        assertEquals(0, installs);
    }

    @Test
    void theWarnNamesTheClassAndCarriesTheThrowable() {
        List<String> warnings = new ArrayList<>();
        List<Throwable> causes = new ArrayList<>();
        PluginInstances instances = new PluginInstances((line, e) -> {
            warnings.add(line);
            causes.add(e);
        });
        ClosingPolicy policy = new ClosingPolicy();
        policy.configure(Map.of("kpipe.topics.exclude", "bad-close"));
        assertSame(policy, instances.policy(policy));

        List<ClassificationPolicy> inUse = new ArrayList<>();
        RegexClassificationPolicy next = new RegexClassificationPolicy(java.util.regex.Pattern.compile(".*"), null);
        instances.replacePolicy(next, p -> {
            inUse.add(p);
            assertEquals(1, EVENTS.size(), "the old policy is still open while the new one is put into use");
        });
        assertEquals(List.of(next), inUse);
        assertEquals(List.of("configure policy(bad-close)", "close policy(bad-close)"), EVENTS);
        assertEquals(1, warnings.size());
        assertTrue(warnings.get(0).contains(ClosingPolicy.class.getName()), warnings.get(0));
        assertEquals("close failed on purpose", causes.get(0).getMessage());

        instances.closeAll(); // the regular-expression default is not AutoCloseable: nothing to close
        assertEquals(1, warnings.size());
    }

    @Test
    void anErrorOfTheJvmIsNotSwallowed() {
        PluginInstances instances = new PluginInstances((line, e) -> {});
        instances.pressure(new OutOfMemoryPressure());
        assertThrows(OutOfMemoryError.class, instances::closeAll);
    }

    private static final class OutOfMemoryPressure implements StoragePressure, AutoCloseable {
        @Override
        public void close() {
            throw new OutOfMemoryError("on purpose");
        }
    }
}
