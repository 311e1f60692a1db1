// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.spi.NetworkEventListener;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A check of the broker side that the broker's events pass through before they reach kpipe's coordinator, named by
 * the JVM system property {@value #PROPERTY}: for tests (the integration tests name the SPI test kit's
 * {@code dev.kpipe.spi.testkit.ContractCheck}, artifact {@code kpipe-spi-testkit}, which they put on the broker's class
 * path beside kpipe's jar). kpipe has no compile-time dependency on it: the class is loaded by name, and without the
 * property nothing is loaded and the events reach the coordinator directly.
 *
 * <p>The named class is a {@link NetworkEventListener} with a public constructor taking the listener it passes every
 * event to and a {@code Consumer<String>} of violations; kpipe logs each violation at ERROR as {@code kpipe: SPI
 * contract violated: ...}. Thread: the installing thread ({@link #wrap}); the check's own events, any.
 */
final class BrokerEventCheck {

    /** The JVM system property naming the check's class; unset: no check. */
    static final String PROPERTY = "kpipe.spi.contract.check.class";

    private static final Logger LOG = LoggerFactory.getLogger(BrokerEventCheck.class);

    private BrokerEventCheck() {}

    /**
     * @param coordinator the listener the broker's events go to
     * @param className the check's class name ({@value #PROPERTY}), or {@code null} for none
     * @return the check wrapping {@code coordinator}, or {@code coordinator} itself if {@code className} is {@code null}
     *     or blank
     * @throws IllegalStateException if the class cannot be loaded or made: a test switch set wrong fails the install
     *     loudly rather than running without the check
     */
    static NetworkEventListener<Object, Object> wrap(
            NetworkEventListener<Object, Object> coordinator, String className) {
        if (className == null || className.isBlank()) {
            return coordinator;
        }
        Consumer<String> violations = v -> LOG.error("kpipe: SPI contract violated: {}", v);
        try {
            Class<?> type = Class.forName(className.trim(), true, BrokerEventCheck.class.getClassLoader());
            Constructor<?> constructor = type.getConstructor(NetworkEventListener.class, Consumer.class);
            Object check = constructor.newInstance(coordinator, violations);
            if (!(check instanceof NetworkEventListener<?, ?>)) {
                throw new IllegalStateException("kpipe: -D" + PROPERTY + "=" + className + " cannot be used: not a "
                        + NetworkEventListener.class.getName());
            }
            LOG.debug( // DEBUG: kpipe's INFO is its start line alone (AgentLoadingIT)
                    "kpipe: the broker's events pass through {} (-D{})", className, PROPERTY);
            @SuppressWarnings("unchecked")
            NetworkEventListener<Object, Object> listener = (NetworkEventListener<Object, Object>) check;
            return listener;
        } catch (ClassNotFoundException
                | NoSuchMethodException
                | InstantiationException
                | IllegalAccessException
                | InvocationTargetException
                | LinkageError e) {
            throw new IllegalStateException("kpipe: -D" + PROPERTY + "=" + className + " cannot be used: " + e, e);
        }
    }
}
