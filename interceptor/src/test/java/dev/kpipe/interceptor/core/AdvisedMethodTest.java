// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.interceptor.HookPoint;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import org.junit.jupiter.api.Test;

/** The matcher made from a hook-list entry matches exactly the method its hook point names. */
class AdvisedMethodTest {

    static final class Target {
        void close(String id) {}

        void close(long id) {}

        void close(String id, long timeout) {}
    }

    private static MethodDescription method(String name, Class<?>... params) throws NoSuchMethodException {
        return new MethodDescription.ForLoadedMethod(Target.class.getDeclaredMethod(name, params));
    }

    @Test
    void matchesTheNamedMethodByEveryParameterTypeAndNothingElse() throws Exception {
        AdvisedMethod m = new AdvisedMethod(
                HookPoint.method(Target.class.getName(), "close", "java.lang.String"), ProcessorAdvice.Close.class);
        assertTrue(m.matcher().matches(method("close", String.class)));
        assertFalse(m.matcher().matches(method("close", long.class)));
        assertFalse(m.matcher().matches(method("close", String.class, long.class)));
        AdvisedMethod primitive = new AdvisedMethod(
                HookPoint.method(Target.class.getName(), "close", "long"), ProcessorAdvice.Close.class);
        assertTrue(primitive.matcher().matches(method("close", long.class)));
        assertFalse(primitive.matcher().matches(method("close", String.class)));
        assertTrue(TypeDescription.ForLoadedType.of(Target.class)
                        .getDeclaredMethods()
                        .filter(m.matcher())
                        .size()
                == 1);
    }

    @Test
    void aFieldOrAClassIsNotAnAdvisedMethod() {
        assertThrows(
                IllegalArgumentException.class,
                () -> new AdvisedMethod(HookPoint.field("kafka.network.Processor", "listenerName"), Object.class));
        assertThrows(
                IllegalArgumentException.class,
                () -> new AdvisedMethod(HookPoint.type("kafka.network.Processor"), Object.class));
    }
}
