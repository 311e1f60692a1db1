// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/kip.md states the reference patch's size per file (lines added and removed) as the two diffs in
 * kafka-dists/kafka-4.3.1-patched have it (kafka_2.13's and kafka-clients'). Whether the diffs still apply is the
 * build's check (that module fails).
 */
class ReferencePatchDocsTest {

    private static final Path DIR = Path.of("..", "kafka-dists", "kafka-4.3.1-patched");
    private static final List<Path> PATCHES =
            List.of(DIR.resolve("kafka-4.3.1.patch"), DIR.resolve("kafka-clients-4.3.1.patch"));
    private static final Path KIP = Path.of("..", "docs", "kip.md");
    /** A row of kip.md's table: {@code | `path` ... | added | removed |}. */
    private static final Pattern ROW =
            Pattern.compile("^\\| `((?:kafka|org/apache/kafka)/[^`]+)`[^|]*\\| (\\d+) \\| (\\d+) \\|$");

    @Test
    void kipStatesThePatchSizePerFile() throws IOException {
        Map<String, String> diff = new TreeMap<>();
        for (Path patch : PATCHES) {
            Map<String, String> sizes = sizes(Files.readString(patch));
            assertFalse(sizes.isEmpty(), "no file in " + patch);
            diff.putAll(sizes);
        }
        Map<String, String> kip = new TreeMap<>();
        for (String line : Files.readString(KIP).lines().toList()) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                kip.put(m.group(1), "+" + m.group(2) + " -" + m.group(3));
            }
        }
        assertEquals(diff, kip, "docs/kip.md's table of the reference patch against " + PATCHES);
    }

    /** @return per file of a unified diff, {@code +added -removed} */
    static Map<String, String> sizes(String unifiedDiff) {
        Map<String, int[]> counts = new TreeMap<>();
        int[] current = null;
        for (String line : unifiedDiff.lines().toList()) {
            if (line.startsWith("+++ ")) {
                String path = line.substring(4).split("\t")[0].trim();
                current = counts.computeIfAbsent(path.substring(path.indexOf('/') + 1), k -> new int[2]);
            } else if (line.startsWith("--- ") || line.startsWith("diff ")) {
                continue;
            } else if (current != null && line.startsWith("+")) {
                current[0]++;
            } else if (current != null && line.startsWith("-")) {
                current[1]++;
            }
        }
        Map<String, String> sizes = new TreeMap<>();
        counts.forEach((path, c) -> sizes.put(path, "+" + c[0] + " -" + c[1]));
        return sizes;
    }
}
