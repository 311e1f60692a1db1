// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Finds an installed JDK of one feature release (e.g. 25), for broker JVMs on another Java than the build's ({@code
 * kpipe.it.broker.java.version}, see {@link HarnessSettings#javaExecutable()}).
 *
 * <p>Where it looks, in this order; a candidate counts only if its {@code release} file says {@code
 * JAVA_VERSION="<feature>..."} and it has an executable {@code bin/java}:
 *
 * <ol>
 *   <li>the harness setting {@code kpipe.it.java.<feature>.home} (system property or {@code harness.properties});
 *   <li>the environment variables {@code JAVA<feature>_HOME}, {@code JDK<feature>_HOME} and {@code
 *       JAVA_HOME_<feature>_X64} (what GitHub's {@code setup-java} sets);
 *   <li>the running JVM's own home;
 *   <li>every folder under {@code /usr/lib/jvm} (Debian, Ubuntu, Fedora), {@code /usr/java}, {@code /opt/java}, {@code
 *       ~/.sdkman/candidates/java}, {@code ~/.jdks} (IntelliJ) and {@code /Library/Java/JavaVirtualMachines/<jdk>/Contents/Home}
 *       (macOS), the newest update first.
 * </ol>
 *
 * <p>Thread-safe (no state).
 */
public final class JavaHomes {

    private static final List<String> SCANNED = List.of(
            "/usr/lib/jvm",
            "/usr/java",
            "/opt/java",
            System.getProperty("user.home") + "/.sdkman/candidates/java",
            System.getProperty("user.home") + "/.jdks",
            "/Library/Java/JavaVirtualMachines");

    private JavaHomes() {}

    /** A lookup's outcome: the JDK home found, or where it looked. */
    public record Lookup(int feature, Optional<Path> home, List<String> lookedAt) {
        /** @return the {@code java} executable of the JDK found */
        public Optional<Path> java() {
            return home.map(h -> h.resolve("bin").resolve("java"));
        }

        /** @return one line saying what was not found and where the lookup went, for a skipped test */
        public String notFound() {
            return "no JDK " + feature + " found (set -Dkpipe.it.java." + feature + ".home=<JDK home> or JAVA" + feature
                    + "_HOME; looked at " + String.join(", ", lookedAt) + ")";
        }
    }

    /**
     * @param feature the Java feature release, e.g. 25
     * @param setting the harness setting {@code kpipe.it.java.<feature>.home}, or {@code null}
     * @param env the environment (e.g. {@link System#getenv()})
     * @return the first JDK of that release found, and where the lookup went
     */
    public static Lookup find(int feature, String setting, Map<String, String> env) {
        List<String> lookedAt = new ArrayList<>();
        Set<Path> candidates = new LinkedHashSet<>();
        if (setting != null) {
            lookedAt.add("kpipe.it.java." + feature + ".home=" + setting);
            candidates.add(Path.of(setting));
        }
        for (String var :
                List.of("JAVA" + feature + "_HOME", "JDK" + feature + "_HOME", "JAVA_HOME_" + feature + "_X64")) {
            String v = env.get(var);
            lookedAt.add("$" + var + (v == null ? "" : "=" + v));
            if (v != null && !v.isBlank()) {
                candidates.add(Path.of(v));
            }
        }
        candidates.add(Path.of(System.getProperty("java.home")));
        lookedAt.add("this JVM (Java " + Runtime.version().feature() + ")");
        for (String root : SCANNED) {
            lookedAt.add(root);
            candidates.addAll(children(Path.of(root)));
        }
        for (Path c : candidates) {
            if (isJdk(c, feature)) {
                return new Lookup(feature, Optional.of(c.toAbsolutePath().normalize()), lookedAt);
            }
        }
        return new Lookup(feature, Optional.empty(), lookedAt);
    }

    /** Folders under a root, newest name first; macOS bundles through {@code Contents/Home}. */
    private static List<Path> children(Path root) {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(Files::isDirectory)
                    .map(p -> Files.isDirectory(p.resolve("Contents/Home")) ? p.resolve("Contents/Home") : p)
                    .sorted(Comparator.comparing(Path::toString).reversed())
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** @return whether {@code home} is a JDK or JRE of {@code feature}: its {@code release} file and {@code bin/java} */
    static boolean isJdk(Path home, int feature) {
        Path release = home.resolve("release");
        if (!Files.isRegularFile(release)
                || !Files.isExecutable(home.resolve("bin").resolve("java"))) {
            return false;
        }
        Properties p = new Properties();
        try (var in = Files.newInputStream(release)) {
            p.load(in);
        } catch (IOException e) {
            return false;
        }
        String version = p.getProperty("JAVA_VERSION", "").replace("\"", "").trim();
        return version.equals(Integer.toString(feature)) || version.startsWith(feature + ".");
    }
}
