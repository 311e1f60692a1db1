// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.kpipe.interceptor.HookPoint;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * One hooked broker method and the advice applied to it: the single entry of the hook list from which both the
 * install-time check ({@link HookPoint#missing}) and the Byte Buddy matcher are made, so the two cannot disagree.
 * Immutable.
 *
 * @param method the hooked method (a {@link HookPoint} naming a method, with its parameter types)
 * @param advice the advice class (tiny: forwards to {@link Hooks})
 */
public record AdvisedMethod(HookPoint method, Class<?> advice) {

    /**
     * @throws IllegalArgumentException if the hook point names a class or a field, not a method
     */
    public AdvisedMethod {
        if (method.member() == null || method.parameterTypes() == null) {
            throw new IllegalArgumentException("not a method: " + method);
        }
    }

    /** @return the class that declares the method (binary name) */
    public String className() {
        return method.className();
    }

    /** @return a matcher of exactly this method: its name and each of its parameter types, by name */
    public ElementMatcher.Junction<MethodDescription> matcher() {
        String[] types = method.parameterTypes();
        ElementMatcher.Junction<MethodDescription> m = named(method.member()).and(takesArguments(types.length));
        for (int i = 0; i < types.length; i++) {
            m = m.and(takesArgument(i, named(types[i])));
        }
        return m;
    }
}
