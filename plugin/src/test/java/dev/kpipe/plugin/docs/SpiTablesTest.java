// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/kip.md's Public Interfaces agree with the SPI: the event table names every public method of {@link
 * NetworkEventListener} once and nothing else, the action table every public method of {@link NetworkProcessor}, and
 * the type headings with the "Other types" list every public type of {@code dev.kpipe.spi}. A method or type added to
 * the SPI, or a row left after one went, fails here until kip.md says the same.
 */
class SpiTablesTest {
    private static final Path KIP = Path.of("..", "docs", "kip.md");
    private static final Path SPI = Path.of("..", "spi", "src", "main", "java", "dev", "kpipe", "spi");
    /** A name in backticks: its identifier, before any parameter list or type arguments. */
    private static final Pattern NAMED = Pattern.compile("`([A-Za-z][A-Za-z0-9]*)[^`]*`");

    @Test
    void eventTableIsTheListenersMethods() throws IOException {
        assertEquals(
                methods(NetworkEventListener.class),
                names(table("| event | thread | default | meaning |")),
                "kip.md's event table against NetworkEventListener");
    }

    @Test
    void actionTableIsTheProcessorsMethods() throws IOException {
        assertEquals(
                methods(NetworkProcessor.class),
                names(table("| method | what it does |")),
                "kip.md's action table against NetworkProcessor");
    }

    @Test
    void publicInterfacesNameEveryPublicType() throws IOException {
        Set<String> types = new TreeSet<>();
        try (Stream<Path> files = Files.list(SPI)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString().replace(".java", "");
                if (!name.equals("package-info") && Modifier.isPublic(type(name).getModifiers())) {
                    types.add(name);
                }
            }
        }
        List<String> lines = Files.readAllLines(KIP);
        List<String> named = new ArrayList<>();
        boolean inPublicInterfaces = false;
        boolean inOtherTypes = false;
        for (String line : lines) {
            if (line.startsWith("## ")) {
                inPublicInterfaces = line.equals("## Public Interfaces");
            } else if (inPublicInterfaces && line.startsWith("### ")) {
                String heading = line.substring(4).replaceAll("&lt;.*", "").strip();
                inOtherTypes = heading.equals("Other types");
                if (types.contains(heading)) {
                    named.add(heading);
                }
            } else if (inOtherTypes && line.startsWith("* ")) {
                Matcher m = NAMED.matcher(line);
                assertTrue(m.find() && m.start() == 2, "an Other types entry starts with its type: " + line);
                named.add(m.group(1));
            }
        }
        assertEquals(named.size(), new TreeSet<>(named).size(), "kip.md names a type twice: " + named);
        assertEquals(types, new TreeSet<>(named), "kip.md's Public Interfaces against the public types of spi/");
    }

    /** @return the names of the public instance methods {@code type} declares */
    private static Set<String> methods(Class<?> type) {
        Set<String> out = new TreeSet<>();
        for (Method m : type.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic()) {
                out.add(m.getName());
            }
        }
        return out;
    }

    /** @return the method names the first cells of {@code rows} name (before any return type), each once */
    private static Set<String> names(List<String> rows) {
        Set<String> out = new TreeSet<>();
        for (String cell : rows) {
            Matcher m = NAMED.matcher(cell.split("→")[0]);
            boolean any = false;
            while (m.find()) {
                assertTrue(out.add(m.group(1)), "kip.md names " + m.group(1) + " twice");
                any = true;
            }
            assertTrue(any, "a row that names no method: " + cell);
        }
        return out;
    }

    /** @return the first cell of each body row of the table under {@code header} */
    private static List<String> table(String header) throws IOException {
        List<String> lines = Files.readAllLines(KIP);
        int at = lines.indexOf(header);
        assertTrue(at >= 0, "kip.md has no table " + header);
        List<String> rows = new ArrayList<>();
        for (int i = at + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            rows.add(lines.get(i).substring(1).split("\\|")[0].strip());
        }
        return rows;
    }

    private static Class<?> type(String simpleName) {
        try {
            return Class.forName("dev.kpipe.spi." + simpleName);
        } catch (ClassNotFoundException e) {
            throw new AssertionError("spi/ has " + simpleName + ".java but no class dev.kpipe.spi." + simpleName, e);
        }
    }
}
