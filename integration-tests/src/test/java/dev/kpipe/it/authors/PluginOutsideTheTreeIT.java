// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.authors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kpipe.it.TestLog;
import java.io.File;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A plugin author's path, from docs/plugin-authors.md alone ("Build and install"): its first code block, run in a copy
 * of this checkout, installs kpipe's API into the local Maven repository; the example plugin, copied to a folder
 * outside the tree, then builds with the second block's command, and its jar is where that block's {@code cp} takes it
 * from. The commands are read from the page and run as written, as child processes of the {@code mvn} that runs this
 * test. The install command of the SPI test kit's section is run in the checkout's copy too, and must put the kit
 * into the local repository.
 *
 * <p>The author's Maven is given an empty home ({@code MAVEN_OPTS=-Duser.home=...}: an empty local repository, so
 * nothing of this build's reactor or local repository can stand in for what the install step must provide), whose
 * {@code settings.xml} makes this build's local repository the first place to download from (Maven Central after it,
 * for what this build never needed): no network in the usual case, and nothing written into this build's local
 * repository. Skipped, saying why, when no {@code mvn} is found.
 */
class PluginOutsideTheTreeIT {

    private static final String PAGE = "plugin-authors.md";
    private static final String SECTION = "### Build and install";
    /** The section of the SPI's test kit, whose install command is run in the checkout's copy as well. */
    private static final String KIT_SECTION = "## Testing an SPI listener: the test kit";

    private static final long STEP_TIMEOUT_MINUTES = 10;

    @Test
    void theExamplePluginBuildsFromACopyOutsideTheTreeWithThePagesCommands() throws Exception {
        Path mvn = mvn();
        Path docs = Path.of(System.getProperty("kpipe.it.docs.dir", "../docs"))
                .toAbsolutePath()
                .normalize();
        Path root = docs.getParent();
        String page = Files.readString(docs.resolve(PAGE));
        List<List<String>> blocks = codeBlocks(page, SECTION);
        assertTrue(
                blocks.size() >= 2,
                PAGE + ", " + SECTION + ": first two code blocks: in kpipe's checkout; in the plugin's folder");
        List<String> install = commands(blocks.get(0), "mvn ");
        List<String> build = commands(blocks.get(1), "mvn ");
        List<String> copy = commands(blocks.get(1), "cp ");
        assertEquals(1, install.size(), "one install command: " + blocks.get(0));
        assertEquals(1, build.size(), "one build command: " + blocks.get(1));
        assertEquals(1, copy.size(), "one cp of the plugin's jar: " + blocks.get(1));
        List<String> kitInstall = codeBlocks(page, KIT_SECTION).stream()
                .flatMap(b -> commands(b, "mvn ").stream())
                .toList();
        assertEquals(1, kitInstall.size(), KIT_SECTION + ": one install command");

        Path work = Files.createTempDirectory("kpipe-plugin-author-");
        assertFalse(work.toRealPath().startsWith(root.toRealPath()), "the copies are outside the tree: " + work);
        try {
            Path home = Files.createDirectories(work.resolve("home"));
            Path repository = home.resolve(".m2").resolve("repository");
            writeSettings(home, Path.of(System.getProperty("kpipe.it.maven.repo.local")));

            Path checkout = work.resolve("kpipe");
            copyTree(root, checkout);
            run(mvn, install.get(0), checkout, home, "install");
            Path api = repository.resolve("dev/kpipe/kpipe-extension/0.1.0/kpipe-extension-0.1.0.jar");
            assertTrue(Files.isRegularFile(api), "the install step put kpipe-extension into " + repository);
            run(mvn, kitInstall.get(0), checkout, home, "install-testkit");
            Path kit = repository.resolve("dev/kpipe/kpipe-spi-testkit/0.1.0/kpipe-spi-testkit-0.1.0.jar");
            assertTrue(Files.isRegularFile(kit), "the test kit's install put kpipe-spi-testkit into " + repository);

            Path plugin = work.resolve("my-plugin");
            copyTree(root.resolve("examples/under-replication-pressure"), plugin);
            assertFalse(
                    Files.readString(plugin.resolve("pom.xml")).contains("<parent>"),
                    "the example's pom stands alone: no parent");
            run(mvn, build.get(0), plugin, home, "package");

            String[] cp = copy.get(0).split("\\s+");
            Path jar = plugin.resolve(cp[1]);
            assertTrue(Files.isRegularFile(jar), copy.get(0) + ": no " + jar);
            try (JarFile j = new JarFile(jar.toFile())) {
                assertTrue(
                        j.getEntry("dev/kpipe/examples/underreplication/UnderReplicationPressure.class") != null,
                        "the plugin's class is in " + jar);
                assertTrue(
                        j.stream().noneMatch(e -> e.getName().startsWith("dev/kpipe/extension/")),
                        "the plugin ships nothing of kpipe's (kpipe-extension is provided)");
            }
        } finally {
            delete(work);
        }
    }

    /** @return the {@code mvn} of the build running this test, else the first on PATH; skips the test if none */
    private static Path mvn() {
        String home = System.getProperty("kpipe.it.maven.home");
        if (home != null && Files.isExecutable(Path.of(home, "bin", "mvn"))) {
            return Path.of(home, "bin", "mvn");
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "mvn");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        assumeTrue(false, "no mvn: neither ${maven.home}/bin/mvn (-Dkpipe.it.maven.home) nor mvn on PATH");
        throw new AssertionError();
    }

    /** @return the lines of each fenced code block between {@code heading} and the next heading of any level */
    static List<List<String>> codeBlocks(String page, String heading) {
        List<List<String>> blocks = new ArrayList<>();
        boolean inSection = false;
        List<String> block = null;
        for (String line : page.split("\n", -1)) {
            if (block == null && line.startsWith("#")) {
                if (inSection) {
                    break;
                }
                inSection = line.strip().equals(heading);
            } else if (inSection && line.startsWith("```")) {
                if (block == null) {
                    block = new ArrayList<>();
                } else {
                    blocks.add(block);
                    block = null;
                }
            } else if (block != null) {
                block.add(line.strip());
            }
        }
        assertTrue(inSection || !blocks.isEmpty(), "no section '" + heading + "' in " + PAGE);
        return blocks;
    }

    private static List<String> commands(List<String> block, String prefix) {
        return block.stream().filter(l -> l.startsWith(prefix)).toList();
    }

    /** The author's settings: this build's local repository first (as Maven Central), then Maven Central itself. */
    private static void writeSettings(Path home, Path buildRepository) throws IOException {
        String local = buildRepository.toUri().toString();
        String repos = repo("central", local) + repo("maven-central", "https://repo.maven.apache.org/maven2");
        String plugins = repos.replace("repository>", "pluginRepository>");
        Files.createDirectories(home.resolve(".m2"));
        Files.writeString(
                home.resolve(".m2/settings.xml"),
                "<settings>\n  <profiles><profile><id>author</id>\n    <repositories>\n" + repos
                        + "    </repositories>\n    <pluginRepositories>\n" + plugins
                        + "    </pluginRepositories>\n  </profile></profiles>\n"
                        + "  <activeProfiles><activeProfile>author</activeProfile></activeProfiles>\n</settings>\n");
    }

    private static String repo(String id, String url) {
        // a local repository keeps no checksum files: not a failed download
        return "      <repository><id>" + id + "</id><url>" + url + "</url>"
                + "<releases><checksumPolicy>ignore</checksumPolicy></releases>"
                + "<snapshots><enabled>false</enabled></snapshots></repository>\n";
    }

    /** Runs a command of the page as written, {@code mvn} being the build's own, in {@code dir}. */
    private static void run(Path mvn, String command, Path dir, Path home, String step)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(Arrays.asList(command.split("\\s+")));
        args.set(0, mvn.toString());
        Path log = TestLog.file(PluginOutsideTheTreeIT.class.getSimpleName() + "-" + step);
        Files.createDirectories(log.getParent());
        ProcessBuilder pb = new ProcessBuilder(args)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        env.keySet().removeAll(Set.of("MAVEN_ARGS", "MAVEN_CONFIG", "MAVEN_OPTS", "MAVEN_DEBUG_OPTS"));
        env.put("MAVEN_OPTS", "-Duser.home=" + home);
        env.put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        if (!p.waitFor(STEP_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            fail("'" + command + "' in " + dir + " took more than " + STEP_TIMEOUT_MINUTES + " min; its output: "
                    + log);
        }
        if (p.exitValue() != 0) {
            List<String> lines = Files.readAllLines(log);
            fail("'" + command + "' in " + dir + " exited with " + p.exitValue() + "; its output (" + log + ") ends:\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
        }
    }

    /** Copies a source tree as a fresh clone would have it: no build output ({@code target/}), no {@code .git}. */
    private static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                if (!dir.equals(from)
                        && Set.of("target", ".git", ".idea", "node_modules").contains(name)) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile() && !file.getFileName().toString().equals(".git")) { // a worktree's
                    Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                }
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount())
                    .forEach(p -> p.toFile().delete());
        }
    }
}
