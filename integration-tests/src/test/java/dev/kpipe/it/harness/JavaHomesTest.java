// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the harness finds a JDK of one release for broker JVMs ({@code kpipe.it.broker.java.version}). */
class JavaHomesTest {

    @TempDir
    Path dir;

    private Path fakeJdk(String name, String javaVersion) throws IOException {
        Path home = dir.resolve(name);
        Files.createDirectories(home.resolve("bin"));
        Path java = Files.writeString(home.resolve("bin/java"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + javaVersion + "\"\n");
        return home;
    }

    @Test
    void theSettingWinsWhenItIsAJdkOfThatRelease() throws IOException {
        Path home = fakeJdk("jdk-97", "97.0.1");
        JavaHomes.Lookup found = JavaHomes.find(97, home.toString(), Map.of());
        assertEquals(Optional.of(home), found.home());
        assertEquals(Optional.of(home.resolve("bin/java")), found.java());
    }

    @Test
    void anEnvironmentVariableIsUsedAndAHomeOfAnotherReleaseIsNot() throws IOException {
        Path wrong = fakeJdk("jdk-96", "96.0.2");
        Path right = fakeJdk("jdk-97-env", "97");
        assertEquals(
                Optional.empty(), JavaHomes.find(97, wrong.toString(), Map.of()).home());
        assertEquals(
                Optional.of(right),
                JavaHomes.find(97, wrong.toString(), Map.of("JAVA97_HOME", right.toString()))
                        .home());
        assertEquals(
                Optional.of(right),
                JavaHomes.find(97, null, Map.of("JAVA_HOME_97_X64", right.toString()))
                        .home());
    }

    @Test
    void notFoundSaysWhereItLookedAndHowToNameOne() {
        JavaHomes.Lookup lookup = JavaHomes.find(98, null, Map.of());
        assertFalse(lookup.home().isPresent());
        String why = lookup.notFound();
        assertTrue(why.startsWith("no JDK 98 found (set -Dkpipe.it.java.98.home=<JDK home> or JAVA98_HOME;"), why);
        assertTrue(why.contains("$JAVA98_HOME") && why.contains("/usr/lib/jvm"), why);
    }

    @Test
    void theRunningJvmIsFoundByItsOwnRelease() {
        int feature = Runtime.version().feature();
        assertTrue(JavaHomes.find(feature, null, Map.of()).home().isPresent(), "this JVM is Java " + feature);
    }
}
