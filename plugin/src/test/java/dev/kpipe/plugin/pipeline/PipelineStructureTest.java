// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape of the pipeline package, read from its compiled classes (ArchUnit), so that {@code mvn test} keeps it: no
 * two files of the package use each other, and the connection and its processor own their state (no other file
 * touches their fields, and only {@link ConnectionPipeline} calls into its parts). Classes are counted by file: a
 * nested class counts as its top-level class. Each test prints what it found, so the numbers can be read off the
 * test output ({@code mvn -o -pl plugin -am test -Dtest=PipelineStructureTest
 * -Dsurefire.failIfNoSpecifiedTests=false}).
 */
class PipelineStructureTest {

    private static final String PACKAGE = "dev.kpipe.plugin.pipeline";

    /** The parts of a connection: only {@code ConnectionPipeline} (and the part itself) calls their methods. */
    private static final Set<String> PARTS = Set.of(
            PACKAGE + ".InflightRequests",
            PACKAGE + ".DispatchPhase",
            PACKAGE + ".ConnectionStateMachine",
            PACKAGE + ".DrainHold",
            PACKAGE + ".PressureWait",
            "dev.kpipe.quotas.ThrottleWindows",
            "dev.kpipe.backpressure.Reservation");

    /** Their owners: no other file reads or writes their fields. */
    private static final Set<String> OWNERS = Set.of(
            PACKAGE + ".ConnectionPipeline",
            PACKAGE + ".ConnectionChannel",
            PACKAGE + ".ProcessorPipelines",
            PACKAGE + ".InflightRequests",
            PACKAGE + ".DispatchPhase",
            PACKAGE + ".ConnectionStateMachine",
            PACKAGE + ".DrainHold",
            PACKAGE + ".PressureWait");

    /**
     * The package's classes: plugin's, or those under {@code -Dkpipe.structure.classes=<dir>} (to measure another
     * build, such as an older commit's, with the same rules).
     */
    private static final JavaClasses CLASSES = System.getProperty("kpipe.structure.classes") == null
            ? new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages(PACKAGE)
            : new ClassFileImporter().importPath(Paths.get(System.getProperty("kpipe.structure.classes")));

    /** @return the file (top-level class) a class is declared in */
    private static String file(JavaClass c) {
        String name = c.getName();
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }

    private static String simple(String name) {
        return name.substring(name.lastIndexOf('.') + 1);
    }

    @Test
    void noTwoFilesOfThePackageUseEachOther() {
        Map<String, Set<String>> uses = new TreeMap<>();
        for (JavaClass c : CLASSES) {
            if (!c.getPackageName().equals(PACKAGE)) {
                continue;
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass();
                if (target.getPackageName().equals(PACKAGE) && !file(target).equals(file(c))) {
                    uses.computeIfAbsent(file(c), k -> new TreeSet<>()).add(file(target));
                }
            }
        }
        Set<String> loops = new TreeSet<>();
        uses.forEach((a, targets) -> {
            for (String b : targets) {
                if (a.compareTo(b) < 0 && uses.getOrDefault(b, Set.of()).contains(a)) {
                    loops.add(simple(a) + " <-> " + simple(b));
                }
            }
        });
        System.out.println("pipeline two-file loops: " + loops.size() + " " + loops);
        assertEquals(List.of(), List.copyOf(loops), "two files of " + PACKAGE + " that use each other");
    }

    /**
     * The same in the source, which also sees what the compiler inlines (a constant such as {@code StorageSignal.UNREAD}
     * leaves no trace in the class file): a file names another if its code, without comments and literals, has the
     * other's class name as a word. Sources: plugin's, or {@code -Dkpipe.structure.sources=<dir>}.
     */
    @Test
    void noTwoFilesOfThePackageNameEachOther() throws IOException {
        Path dir = Paths.get(System.getProperty("kpipe.structure.sources", "src/main/java/dev/kpipe/plugin/pipeline"));
        Map<String, String> code = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (name.endsWith(".java") && !name.equals("package-info.java")) {
                    code.put(name.substring(0, name.length() - 5), codeOnly(Files.readString(f)));
                }
            }
        }
        Set<String> loops = new TreeSet<>();
        for (String a : code.keySet()) {
            for (String b : code.keySet()) {
                if (a.compareTo(b) < 0 && names(code.get(a), b) && names(code.get(b), a)) {
                    loops.add(a + " <-> " + b);
                }
            }
        }
        System.out.println("pipeline two-file loops in the source: " + loops.size() + " " + loops);
        assertEquals(List.of(), List.copyOf(loops), "two files of " + PACKAGE + " that name each other");
    }

    private static boolean names(String code, String className) {
        return Pattern.compile("\\b" + className + "\\b").matcher(code).find();
    }

    /** @return the source without its comments, string literals and character literals */
    private static String codeOnly(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        int n = source.length();
        while (i < n) {
            char c = source.charAt(i);
            if (c == '/' && i + 1 < n && source.charAt(i + 1) == '/') {
                while (i < n && source.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && source.charAt(i + 1) == '*') {
                int end = source.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                out.append(' ');
            } else if (c == '"' || c == '\'') {
                i++;
                while (i < n && source.charAt(i) != c) {
                    i += source.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
                out.append(' ');
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    @Test
    void noOtherFileTouchesTheFieldsOfTheConnectionOrTheProcessor() {
        Set<String> accesses = new TreeSet<>();
        for (JavaClass c : CLASSES) {
            for (JavaFieldAccess a : c.getFieldAccessesFromSelf()) {
                String owner = a.getTargetOwner().getName();
                if (OWNERS.contains(owner) && !file(a.getTargetOwner()).equals(file(c))) {
                    accesses.add(simple(file(c)) + " " + a.getAccessType() + " " + simple(owner) + "." + a.getName()
                            + " (line " + a.getLineNumber() + ")");
                }
            }
        }
        System.out.println("field accesses from other files: " + accesses.size());
        accesses.forEach(a -> System.out.println("  " + a));
        assertEquals(List.of(), List.copyOf(accesses), "fields of the connection or the processor touched elsewhere");
    }

    @Test
    void onlyTheConnectionCallsIntoItsParts() {
        Set<String> calls = new TreeSet<>();
        for (JavaClass c : CLASSES) {
            String from = file(c);
            if (from.equals(PACKAGE + ".ConnectionPipeline")) {
                continue;
            }
            for (JavaMethodCall call : c.getMethodCallsFromSelf()) {
                String owner = call.getTargetOwner().getName();
                if (PARTS.contains(owner) && !file(call.getTargetOwner()).equals(from)) {
                    calls.add(simple(from) + " -> " + simple(owner) + "." + call.getName() + " (line "
                            + call.getLineNumber() + ")");
                }
            }
        }
        System.out.println("calls into a connection's parts from other files: " + calls.size());
        calls.forEach(a -> System.out.println("  " + a));
        assertEquals(List.of(), List.copyOf(calls), "a connection's parts called from outside ConnectionPipeline");
    }
}
