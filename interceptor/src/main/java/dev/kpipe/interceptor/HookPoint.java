// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * One broker class member a binding needs, checked by reflection before anything is installed.
 *
 * @param className the binary class name, e.g. {@code kafka.network.Processor}
 * @param member a method or field name, or {@code null} for the class itself
 * @param parameterTypes the method's parameter types (binary names, or primitive names such as {@code long}), or
 *     {@code null} for a field
 */
public record HookPoint(String className, String member, String... parameterTypes) {

    private static final Map<String, Class<?>> PRIMITIVES = Map.of(
            "boolean",
            boolean.class,
            "byte",
            byte.class,
            "char",
            char.class,
            "short",
            short.class,
            "int",
            int.class,
            "long",
            long.class,
            "float",
            float.class,
            "double",
            double.class);

    /**
     * @param className the class
     * @return a hook point naming a class (it must exist; its members are not checked)
     */
    public static HookPoint type(String className) {
        return new HookPoint(className, null, (String[]) null);
    }

    /**
     * @param className the class
     * @param field the field name
     * @return a hook point naming a field
     */
    public static HookPoint field(String className, String field) {
        return new HookPoint(className, field, (String[]) null);
    }

    /**
     * @param className the class
     * @param method the method name
     * @param parameterTypes its parameter types (binary names)
     * @return a hook point naming a method
     */
    public static HookPoint method(String className, String method, String... parameterTypes) {
        return new HookPoint(className, method, parameterTypes);
    }

    /**
     * Checks the hook points without initializing any class.
     *
     * @param loader the broker's class loader
     * @param points the hook points
     * @return a description of each missing point; empty if all exist
     */
    public static List<String> missing(ClassLoader loader, List<HookPoint> points) {
        List<String> missing = new ArrayList<>();
        for (HookPoint p : points) {
            if (!p.existsIn(loader)) {
                missing.add(p.toString());
            }
        }
        return missing;
    }

    boolean existsIn(ClassLoader loader) {
        try {
            Class<?> type = Class.forName(className, false, loader);
            if (member == null) {
                return true;
            }
            if (parameterTypes == null) {
                Field f = type.getDeclaredField(member);
                return f != null;
            }
            Class<?>[] params = new Class<?>[parameterTypes.length];
            for (int i = 0; i < params.length; i++) {
                Class<?> primitive = PRIMITIVES.get(parameterTypes[i]);
                params[i] = primitive != null ? primitive : Class.forName(parameterTypes[i], false, loader);
            }
            type.getDeclaredMethod(member, params);
            return true;
        } catch (ClassNotFoundException | NoSuchMethodException | NoSuchFieldException | LinkageError e) {
            return false;
        }
    }

    @Override
    public String toString() {
        if (member == null) {
            return className;
        }
        return parameterTypes == null
                ? className + "." + member
                : className + "." + member + "(" + String.join(", ", Arrays.asList(parameterTypes)) + ")";
    }
}
