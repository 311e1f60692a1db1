// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.docs;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's settings and metrics tables are the ones {@link ReferenceTables} generates from the code. When they
 * differ the test fails with a diff; {@code -Dkpipe.docs.regenerate=true} writes the generated tables into the README
 * instead (and passes). The README is found relative to this module ({@code ../README.md}).
 */
class KpipeDocsTest {
    static final String REGENERATE = "mvn -B -pl plugin -am test -Dtest=KpipeDocsTest "
            + "-Dsurefire.failIfNoSpecifiedTests=false -Dkpipe.docs.regenerate=true";

    @Test
    void readmeTablesAreTheGeneratedOnes() throws IOException {
        Path readme = Path.of("..", "README.md").toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(readme), "README.md not found at " + readme + " (run from the plugin module)");
        String text = Files.readString(readme);
        String updated = ReferenceTables.replaceRegion(text, "settings", ReferenceTables.settings());
        updated = ReferenceTables.replaceRegion(updated, "metrics", ReferenceTables.metrics());
        if (updated.equals(text)) {
            return;
        }
        if (Boolean.getBoolean("kpipe.docs.regenerate")) {
            Files.writeString(readme, updated);
            return;
        }
        StringBuilder diff = new StringBuilder();
        for (String region : List.of("settings", "metrics")) {
            diff.append(diff(region, ReferenceTables.region(text, region), ReferenceTables.region(updated, region)));
        }
        fail(
                "README.md's generated tables differ from the code (KpipeConfig's ConfigDef, UNITS, RECONFIGURABLE_CONFIGS;"
                        + " KpipeMetrics' descriptions).\n" + diff + "Regenerate them with:\n  " + REGENERATE + "\n");
    }

    /** @return the lines only in the committed region ({@code -}) and only in the generated one ({@code +}) */
    private static String diff(String region, String committed, String generated) {
        assertNotNull(committed, region);
        List<String> a = committed.lines().toList();
        List<String> b = generated.lines().toList();
        StringBuilder sb = new StringBuilder();
        for (String line : a) {
            if (!b.contains(line)) {
                sb.append("  - ").append(line).append('\n');
            }
        }
        for (String line : b) {
            if (!a.contains(line)) {
                sb.append("  + ").append(line).append('\n');
            }
        }
        return sb.length() == 0 ? "" : "region " + region + " (- README.md, + generated):\n" + sb;
    }
}
