// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.it.harness.HarnessSettings;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kpipe drop-in jar against every laid-out Kafka distribution ({@code integration-tests/target/kafka-<v>/libs}),
 * without starting a broker: both are put in one class loader, as a broker's {@code libs/} would be, and for each
 * version
 *
 * <ul>
 *   <li>{@code KafkaVersion.of} reads the distribution's version and {@code Interceptor.bindingFor} picks the expected
 *       binding (3.8.x and 3.9.x: {@code v3_8}, 4.0.x: {@code v4_0}, 4.1.x to 4.3.x: {@code v4_1}, 4.4.x:
 *       {@code v4_4}), or refuses an unsupported version with an {@code UnsupportedBrokerException};
 *   <li>every hook point of the picked binding exists ({@code HookPoint.missing} is empty), the optional ones of
 *       deferred dispatch (KIP-890 verified appends) included: every supported line has them;
 *   <li>every class, method and field of the broker's libraries that kpipe's own classes use (read from their byte
 *       code) resolves there, so no {@code NoSuchMethodError} can surface later on a broker thread. The other
 *       version lines' binding packages are left out (that broker never loads them), except the classes a binding
 *       shares from another line's package (the Scala request model {@code v3_8.RequestModel38} of 4.0 to 4.3). For an unsupported version only
 *       the classes of the start-up path that reports it are checked: the top-level plugin and interceptor classes
 *       and the SPI (the pipeline's request classification, for one, uses fields of 4.x requests, but never runs
 *       there).
 * </ul>
 *
 * Runs in the test phase (surefire) in a few seconds; single-threaded.
 */
class BindingLinkageTest {

    private static final String BINDINGS = "dev/kpipe/interceptor/";
    private static final Map<String, String> EXPECTED_BINDING = Map.of(
            "3.8", "dev.kpipe.interceptor.v3_8.Binding38",
            "3.9", "dev.kpipe.interceptor.v3_8.Binding38",
            "4.0", "dev.kpipe.interceptor.v4_0.Binding40",
            "4.1", "dev.kpipe.interceptor.v4_1.Binding41",
            "4.2", "dev.kpipe.interceptor.v4_1.Binding41",
            "4.3", "dev.kpipe.interceptor.v4_1.Binding41",
            "4.4", "dev.kpipe.interceptor.v4_4.Binding44");
    /** Every binding package (one per module {@code interceptor-kafka-*}). */
    private static final List<String> BINDING_PACKAGES =
            List.of(BINDINGS + "v3_8/", BINDINGS + "v4_0/", BINDINGS + "v4_1/", BINDINGS + "v4_4/");
    /** Classes a binding uses from another line's binding package (class file name without {@code .class}). */
    private static final Map<String, List<String>> SHARED_CLASSES = Map.of(
            "dev.kpipe.interceptor.v4_0.Binding40", List.of(BINDINGS + "v3_8/RequestModel38"),
            "dev.kpipe.interceptor.v4_1.Binding41", List.of(BINDINGS + "v3_8/RequestModel38"));
    /** Packages (their classes only, not subpackages) that run on a broker kpipe does not support. */
    private static final List<String> START_UP_PATH = List.of("dev/kpipe/plugin/", BINDINGS, "dev/kpipe/spi/");

    static List<String> laidOutVersions() throws IOException {
        Path dists = HarnessSettings.load().kafkaDists();
        try (Stream<Path> dirs = Files.list(dists)) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("kafka-"))
                    .map(HarnessSettings::kafkaVersionOf)
                    .flatMap(Optional::stream)
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    @Test
    void everySupportedLineAndOneUnsupportedVersionAreLaidOut() throws IOException {
        List<String> versions = laidOutVersions();
        assertTrue(
                versions.containsAll(List.of("3.7.2", "3.8.1", "3.9.1", "4.0.2", "4.1.2", "4.2.1", "4.3.1", "4.4.0")),
                () -> "laid out: " + versions);
    }

    @ParameterizedTest(name = "Kafka {0}")
    @MethodSource("laidOutVersions")
    void pluginLinksAgainstTheDistribution(String version) throws Exception {
        HarnessSettings settings = HarnessSettings.load();
        Path plugin = settings.pluginJar();
        assertTrue(Files.isRegularFile(plugin), () -> "kpipe jar missing: " + plugin);
        List<URL> urls = new ArrayList<>();
        try (Stream<Path> jars = Files.list(settings.kafkaHome(version).resolve("libs"))) {
            for (Path jar : (Iterable<Path>) jars.sorted()::iterator) {
                urls.add(jar.toUri().toURL());
            }
        }
        urls.add(plugin.toUri().toURL());
        try (URLClassLoader loader =
                new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            String kafkaVersion = (String) Class.forName("dev.kpipe.interceptor.KafkaVersion", true, loader)
                    .getMethod("of", ClassLoader.class)
                    .invoke(null, loader);
            assertEquals(version, kafkaVersion, "KafkaVersion.of");

            String line = version.substring(0, version.lastIndexOf('.'));
            String expected = EXPECTED_BINDING.get(line);
            Set<String> skipped = new TreeSet<>(BINDING_PACKAGES);
            List<String> shared = List.of();
            Predicate<String> checkedClass = name -> true;
            Object binding;
            try {
                binding = Class.forName("dev.kpipe.interceptor.Interceptor", true, loader)
                        .getMethod("bindingFor", String.class)
                        .invoke(null, kafkaVersion);
            } catch (InvocationTargetException e) {
                assertEquals(null, expected, () -> "Kafka " + version + " should be supported: " + e.getCause());
                assertEquals(
                        "dev.kpipe.interceptor.UnsupportedBrokerException",
                        e.getCause().getClass().getName());
                assertTrue(
                        e.getCause().getMessage().startsWith("kpipe does not support Kafka " + version),
                        e.getCause().getMessage());
                binding = null;
                skipped.add(BINDINGS + "core/");
                checkedClass = name ->
                        START_UP_PATH.stream().anyMatch(p -> name.startsWith(p) && name.indexOf('/', p.length()) < 0);
            }
            if (binding != null) {
                assertEquals(expected, binding.getClass().getName());
                Object points = binding.getClass().getMethod("hookPoints").invoke(binding);
                Object missing = Class.forName("dev.kpipe.interceptor.HookPoint", true, loader)
                        .getMethod("missing", ClassLoader.class, List.class)
                        .invoke(null, loader, points);
                assertEquals(List.of(), missing, "hook points missing in Kafka " + version);
                Map<?, ?> deferred = (Map<?, ?>) binding.getClass()
                        .getMethod("deferredDispatchHookPoints")
                        .invoke(binding);
                assertEquals(
                        "[PRODUCE, TXN_OFFSET_COMMIT]",
                        new TreeSet<>(deferred.keySet().stream()
                                        .map(String::valueOf)
                                        .toList())
                                .toString(),
                        "APIs with deferred dispatch in " + expected);
                assertEquals(
                        3,
                        deferred.entrySet().stream()
                                .filter(e -> String.valueOf(e.getKey()).equals("PRODUCE"))
                                .mapToInt(e -> ((List<?>) e.getValue()).size())
                                .sum(),
                        "deferred-dispatch hook points for PRODUCE in " + expected);
                for (Map.Entry<?, ?> e : deferred.entrySet()) {
                    Object missingDeferred = Class.forName("dev.kpipe.interceptor.HookPoint", true, loader)
                            .getMethod("missing", ClassLoader.class, List.class)
                            .invoke(null, loader, e.getValue());
                    assertEquals(
                            List.of(),
                            missingDeferred,
                            "deferred-dispatch hook points for " + e.getKey() + " missing in Kafka " + version);
                }
                String own = binding.getClass().getPackageName().replace('.', '/') + "/";
                skipped.remove(own);
                shared = SHARED_CLASSES.getOrDefault(expected, List.of());
            }

            Object produce = Class.forName("org.apache.kafka.common.protocol.ApiKeys", true, loader)
                    .getField("PRODUCE")
                    .get(null);
            short latestProduce =
                    (short) produce.getClass().getMethod("latestVersion").invoke(produce);
            boolean produceByTopicId = latestProduce >= 13;
            Linkage linkage = new Linkage(loader);
            try (JarFile jar = new JarFile(plugin.toFile())) {
                for (Enumeration<JarEntry> en = jar.entries(); en.hasMoreElements(); ) {
                    JarEntry e = en.nextElement();
                    String name = e.getName();
                    if (name.startsWith("dev/kpipe/")
                            && !name.startsWith("dev/kpipe/shaded/")
                            && name.endsWith(".class")
                            && (skipped.stream().noneMatch(name::startsWith) || isShared(shared, name))
                            && checkedClass.test(name)
                            && (produceByTopicId || !name.equals(PRODUCE_TOPIC_IDS))) {
                        try (InputStream in = jar.getInputStream(e)) {
                            linkage.check(name, in.readAllBytes());
                        }
                    }
                }
            }
            System.out.printf(
                    "Kafka %s: binding %s, %d broker-side references of kpipe classes checked (skipped %s but %s;"
                            + " latest produce v%d%s)%n",
                    version,
                    binding == null
                            ? "none (unsupported; start-up path only)"
                            : binding.getClass().getSimpleName(),
                    linkage.checked,
                    skipped,
                    shared,
                    latestProduce,
                    produceByTopicId ? "" : ", ProduceTopicIds excused");
            assertTrue(
                    linkage.checked > (binding == null ? 20 : 90),
                    () -> "only " + linkage.checked + " references checked");
            assertEquals(
                    List.of(),
                    linkage.problems,
                    () -> "kpipe classes (except " + skipped + ") use members Kafka " + version + " lacks");
        }
    }

    /** Resolves the broker-side references of class files in a loader; not thread-safe. */
    /**
     * The plugin's one use of a kafka-clients member newer than 3.8: {@code TopicProduceData.topicId()} (produce v13+,
     * Kafka 4.1+), kept in this class alone, which only a produce request naming its topics by id reaches. Excused on a
     * broker whose latest produce version is below 13 (checked from that broker's own {@code ApiKeys}): it never parses
     * such a request.
     */
    private static final String PRODUCE_TOPIC_IDS = "dev/kpipe/plugin/classify/ProduceTopicIds.class";

    /** @return whether the class file (or one of its nested classes) is one of the shared classes */
    private static boolean isShared(List<String> shared, String classFile) {
        return shared.stream().anyMatch(c -> classFile.equals(c + ".class") || classFile.startsWith(c + "$"));
    }

    private static final class Linkage {
        private final ClassLoader loader;
        private final Set<String> seen = new LinkedHashSet<>();
        final List<String> problems = new ArrayList<>();
        int checked;

        Linkage(ClassLoader loader) {
            this.loader = loader;
        }

        void check(String from, byte[] classFile) {
            String user = from.substring(0, from.length() - ".class".length());
            new ClassReader(classFile)
                    .accept(
                            new ClassVisitor(Opcodes.ASM9) {
                                @Override
                                public void visit(
                                        int version,
                                        int access,
                                        String name,
                                        String signature,
                                        String superName,
                                        String[] interfaces) {
                                    type(user, superName);
                                    for (String i : interfaces == null ? new String[0] : interfaces) {
                                        type(user, i);
                                    }
                                }

                                @Override
                                public MethodVisitor visitMethod(
                                        int access, String name, String desc, String signature, String[] exceptions) {
                                    return new MethodVisitor(Opcodes.ASM9) {
                                        @Override
                                        public void visitMethodInsn(
                                                int opcode, String owner, String mname, String mdesc, boolean itf) {
                                            method(user, owner, mname, mdesc);
                                        }

                                        @Override
                                        public void visitFieldInsn(
                                                int opcode, String owner, String fname, String fdesc) {
                                            field(user, owner, fname, fdesc);
                                        }

                                        @Override
                                        public void visitTypeInsn(int opcode, String type) {
                                            type(user, type);
                                        }

                                        @Override
                                        public void visitLdcInsn(Object value) {
                                            if (value instanceof Type t && t.getSort() == Type.OBJECT) {
                                                type(user, t.getInternalName());
                                            }
                                        }

                                        @Override
                                        public void visitTryCatchBlock(
                                                net.bytebuddy.jar.asm.Label start,
                                                net.bytebuddy.jar.asm.Label end,
                                                net.bytebuddy.jar.asm.Label handler,
                                                String type) {
                                            type(user, type);
                                        }

                                        @Override
                                        public void visitInvokeDynamicInsn(
                                                String iname, String idesc, Handle bsm, Object... args) {
                                            for (Object a : args) {
                                                if (a instanceof Handle h) {
                                                    method(user, h.getOwner(), h.getName(), h.getDesc());
                                                }
                                            }
                                        }
                                    };
                                }
                            },
                            ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        }

        /** The JDK and kpipe itself are not the broker's to provide. */
        private static boolean brokerSide(String internalName) {
            return internalName != null
                    && !internalName.startsWith("[")
                    && !internalName.startsWith("java/")
                    && !internalName.startsWith("javax/")
                    && !internalName.startsWith("jdk/")
                    && !internalName.startsWith("sun/")
                    && !internalName.startsWith("dev/kpipe/");
        }

        private Class<?> load(String user, String internalName) {
            try {
                return Class.forName(internalName.replace('/', '.'), false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                problems.add(user + " -> class " + internalName + " (" + e + ")");
                return null;
            }
        }

        private void type(String user, String internalName) {
            if (brokerSide(internalName) && seen.add("T" + internalName)) {
                checked++;
                load(user, internalName);
            }
        }

        private void method(String user, String owner, String name, String desc) {
            if (!brokerSide(owner) || !seen.add("M" + owner + "." + name + desc)) {
                return;
            }
            checked++;
            Class<?> c = load(user, owner);
            if (c == null) {
                return;
            }
            try {
                if (!hasMethod(c, name, desc, new LinkedHashSet<>())) {
                    problems.add(user + " -> " + owner + "." + name + desc);
                }
            } catch (LinkageError e) {
                problems.add(user + " -> " + owner + "." + name + desc + " (" + e + ")");
            }
        }

        private static boolean hasMethod(Class<?> c, String name, String desc, Set<Class<?>> visited) {
            if (c == null || !visited.add(c)) {
                return false;
            }
            if (name.equals("<init>")) {
                for (Constructor<?> k : c.getDeclaredConstructors()) {
                    if (Type.getConstructorDescriptor(k).equals(desc)) {
                        return true;
                    }
                }
                return false;
            }
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && Type.getMethodDescriptor(m).equals(desc)) {
                    return true;
                }
            }
            if (hasMethod(c.getSuperclass(), name, desc, visited)) {
                return true;
            }
            for (Class<?> i : c.getInterfaces()) {
                if (hasMethod(i, name, desc, visited)) {
                    return true;
                }
            }
            // methods of Object on an interface (e.g. equals through an interface reference)
            return c.isInterface() && hasMethod(Object.class, name, desc, visited);
        }

        private void field(String user, String owner, String name, String desc) {
            if (!brokerSide(owner) || !seen.add("F" + owner + "." + name + desc)) {
                return;
            }
            checked++;
            Class<?> c = load(user, owner);
            for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                for (Field f : k.getDeclaredFields()) {
                    if (f.getName().equals(name)
                            && Type.getDescriptor(f.getType()).equals(desc)) {
                        return;
                    }
                }
                for (Class<?> i : k.getInterfaces()) { // constants of interfaces
                    for (Field f : i.getFields()) {
                        if (f.getName().equals(name)
                                && Type.getDescriptor(f.getType()).equals(desc)) {
                            return;
                        }
                    }
                }
            }
            if (c != null) {
                problems.add(user + " -> field " + owner + "." + name + ":" + desc);
            }
        }
    }
}
