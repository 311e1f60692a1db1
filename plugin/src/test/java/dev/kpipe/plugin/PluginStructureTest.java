// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape of the whole plugin module (issue #31), from its compiled classes (ArchUnit) and its sources, so that
 * {@code mvn test} keeps it: no two files of {@code dev.kpipe.plugin} and its packages use each other, and no source
 * file is over 400 lines. The pipeline package's own rules are {@code PipelineStructureTest}'s. Each test prints what
 * it found.
 */
class PluginStructureTest {
    private static final String ROOT = "dev.kpipe.plugin";
    private static final int MAX_LINES = 400;

    /** @return the file (top-level class) a class is declared in */
    private static String file(JavaClass c) {
        String name = c.getName();
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }

    private static boolean inModule(JavaClass c) {
        return c.getPackageName().equals(ROOT) || c.getPackageName().startsWith(ROOT + ".");
    }

    @Test
    void noTwoFilesOfTheModuleUseEachOther() {
        Map<String, Set<String>> uses = new TreeMap<>();
        for (JavaClass c : new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ROOT)) {
            if (!inModule(c)) {
                continue;
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass();
                if (inModule(target) && !file(target).equals(file(c))) {
                    uses.computeIfAbsent(file(c), k -> new TreeSet<>()).add(file(target));
                }
            }
        }
        Set<String> loops = new TreeSet<>();
        uses.forEach((a, targets) -> {
            for (String b : targets) {
                if (a.compareTo(b) < 0 && uses.getOrDefault(b, Set.of()).contains(a)) {
                    loops.add(a + " <-> " + b);
                }
            }
        });
        System.out.println("plugin two-file loops: " + loops.size() + " " + loops);
        assertEquals(List.of(), List.copyOf(loops), "two files of " + ROOT + " that use each other");
    }

    @Test
    void noSourceFileIsOver400Lines() throws IOException {
        Map<String, Integer> over = new TreeMap<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.toString().endsWith(".java")) {
                    int lines = Files.readAllLines(f).size();
                    if (lines > MAX_LINES) {
                        over.put(f.toString(), lines);
                    }
                }
            }
        }
        System.out.println("plugin source files over " + MAX_LINES + " lines: " + over);
        assertEquals(Map.of(), over, "source files over " + MAX_LINES + " lines");
    }
}
