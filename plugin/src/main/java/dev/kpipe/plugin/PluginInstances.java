// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.extension.ClassificationPolicy;
import dev.kpipe.extension.StoragePressure;
import dev.kpipe.spi.NetworkEventListener;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extension instances kpipe runs with, and the end of their life: the {@link ClassificationPolicy} (from {@code
 * kpipe.classification.policy.class}, or the default over {@code kpipe.topics.*}) and the {@link StoragePressure}
 * (from {@code kpipe.storage.pressure.class}) and the observing listeners (from {@code kpipe.spi.observer.classes}). An
 * instance that implements {@link AutoCloseable} is closed, once,
 * when kpipe stops using it:
 *
 * <ul>
 *   <li>a policy, when a change of {@code kpipe.topics.include} or {@code kpipe.topics.exclude} at runtime replaces it
 *       with a new instance (after the new one is in use: a network thread may still be finishing a call on the old
 *       one);
 *   <li>all, when the hooks cannot be installed (the broker runs stock and never uses them);
 *   <li>all, when the broker closes kpipe (its metric reporter) at shutdown.
 * </ul>
 *
 * A {@code close} that throws is logged at WARN, naming the class, and swallowed: it never reaches the broker's
 * thread ({@link VirtualMachineError} excepted, as everywhere).
 *
 * <p>Thread-safety: every method is synchronized. Callers are the broker's start-up, config and shutdown threads and
 * kpipe's install thread, never a network or request handler thread.
 */
final class PluginInstances {

    private static final Logger LOG = LoggerFactory.getLogger(PluginInstances.class);

    private final BiConsumer<String, Throwable> warn;
    private ClassificationPolicy policy;
    private StoragePressure pressure;
    private List<NetworkEventListener<Object, Object>> observers = List.of();

    /** Logs a failed close at WARN on kpipe's logger. */
    PluginInstances() {
        this(LOG::warn);
    }

    /** @param warn receives the WARN line and the throwable of a close that failed (tests record them) */
    PluginInstances(BiConsumer<String, Throwable> warn) {
        this.warn = warn;
    }

    /**
     * @param created the policy an install puts into use
     * @return {@code created}
     */
    synchronized ClassificationPolicy policy(ClassificationPolicy created) {
        ClassificationPolicy old = policy;
        policy = created;
        close(old, created);
        return created;
    }

    /**
     * @param created the storage pressure an install puts into use, or {@code null} for none
     * @return {@code created}
     */
    synchronized StoragePressure pressure(StoragePressure created) {
        StoragePressure old = pressure;
        pressure = created;
        close(old, created);
        return created;
    }

    /**
     * Makes the observing listeners an install puts into use, and closes those they replace.
     *
     * @param config names them ({@value KpipeConfig#SPI_OBSERVER_CLASSES}); each is configured with its originals
     * @return them, in the order named; empty without any
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    synchronized List<NetworkEventListener<Object, Object>> observers(KpipeConfig config) {
        List<NetworkEventListener<Object, Object>> created = (List) List.copyOf(
                config.getConfiguredInstances(KpipeConfig.SPI_OBSERVER_CLASSES, NetworkEventListener.class));
        List<NetworkEventListener<Object, Object>> old = observers;
        observers = created;
        for (NetworkEventListener<Object, Object> o : old) {
            if (!created.contains(o)) {
                close(o, null);
            }
        }
        return created;
    }

    /**
     * Puts a new policy into use, then closes the one it replaces.
     *
     * @param next the new policy
     * @param putIntoUse hands {@code next} to the running coordinator
     */
    synchronized void replacePolicy(ClassificationPolicy next, Consumer<? super ClassificationPolicy> putIntoUse) {
        putIntoUse.accept(next);
        policy(next);
    }

    /** Closes the instances in use and forgets them; a later install starts afresh. */
    synchronized void closeAll() {
        ClassificationPolicy p = policy;
        StoragePressure s = pressure;
        List<NetworkEventListener<Object, Object>> o = observers;
        policy = null;
        pressure = null;
        observers = List.of();
        close(p, null);
        close(s, null);
        for (NetworkEventListener<Object, Object> each : o) {
            close(each, null);
        }
    }

    /** Closes {@code old} if it is an {@link AutoCloseable} other than {@code replacement}. */
    private void close(Object old, Object replacement) {
        if (!(old instanceof AutoCloseable closeable) || old == replacement) {
            return;
        }
        try {
            closeable.close();
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) { // an extension's fault stays out of the broker's thread
            warn.accept("kpipe: closing " + old.getClass().getName() + " failed; kpipe no longer uses it", e);
        }
    }
}
