package dev.kpipe.interceptor;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One broker class member a binding needs, checked by reflection before anything is installed.
 *
 * @param className the binary class name, e.g. {@code kafka.network.Processor}
 * @param member a method or field name
 * @param parameterTypes the method's parameter types (binary names), or {@code null} for a field
 */
public record HookPoint(String className, String member, String... parameterTypes) {

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
            if (parameterTypes == null) {
                Field f = type.getDeclaredField(member);
                return f != null;
            }
            Class<?>[] params = new Class<?>[parameterTypes.length];
            for (int i = 0; i < params.length; i++) {
                params[i] = Class.forName(parameterTypes[i], false, loader);
            }
            type.getDeclaredMethod(member, params);
            return true;
        } catch (ClassNotFoundException | NoSuchMethodException | NoSuchFieldException | LinkageError e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return parameterTypes == null
            ? className + "." + member
            : className + "." + member + "(" + String.join(", ", Arrays.asList(parameterTypes)) + ")";
    }
}
