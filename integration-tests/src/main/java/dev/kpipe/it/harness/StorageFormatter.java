// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

/**
 * Runs {@code kafka.tools.StorageTool format} inside this JVM when the Kafka on this JVM's classpath is the version
 * the cluster runs (then it is the very code {@code kafka-storage.sh format} would run, without a 2-3 s JVM start).
 * Reflective, so the harness compiles against kafka-clients only. Thread-safe (formats one node at a time).
 */
final class StorageFormatter {
    private static final String TOOL = "kafka.tools.StorageTool";

    private StorageFormatter() {}

    /**
     * @param kafkaVersion the version the cluster runs
     * @return whether {@code kafka_2.13-<kafkaVersion>.jar} provides {@code kafka.tools.StorageTool} in this JVM
     */
    static boolean canFormatInProcess(String kafkaVersion) {
        if (Boolean.getBoolean("kpipe.it.format.fork")) {
            return false;
        }
        try {
            Class<?> tool = Class.forName(TOOL, false, StorageFormatter.class.getClassLoader());
            var source = tool.getProtectionDomain().getCodeSource();
            return source != null && source.getLocation().getPath().endsWith("/kafka_2.13-" + kafkaVersion + ".jar");
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * Formats the node's storage in this JVM if {@link #canFormatInProcess possible}.
     *
     * @return false if not possible here (nothing done)
     * @throws IllegalStateException if the tool fails; its output is in the message and in {@code format.log}
     */
    static synchronized boolean formatInProcess(NodeStorage node, String kafkaVersion) {
        if (!canFormatInProcess(kafkaVersion)) {
            return false;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit;
        try (PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            Method execute = Class.forName(TOOL).getMethod("execute", String[].class, PrintStream.class);
            try {
                exit = (int) execute.invoke(null, node.formatArgs().toArray(String[]::new), ps);
            } catch (InvocationTargetException e) {
                e.getCause().printStackTrace(ps);
                exit = 1;
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot call " + TOOL + ".execute", e);
        }
        String output = out.toString(StandardCharsets.UTF_8);
        try {
            Files.writeString(node.dir().resolve("format.log"), output);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (exit != 0 || !node.isFormatted()) {
            throw new IllegalStateException("formatting node " + node.id() + " failed (exit " + exit + "):\n" + output);
        }
        return true;
    }
}
