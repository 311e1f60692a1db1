// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A JVM's live heap by class, from {@code jcmd <pid> GC.class_histogram} (which runs a full GC first, so only what
 * survives it counts): S10's heap per connection. Immutable; {@link #of} blocks the calling thread for the jcmd run.
 *
 * @param totalBytes the histogram's total, bytes
 * @param instances the histogram's total instances
 * @param bytesByClass bytes per class name
 */
record ClassHistogram(long totalBytes, long instances, Map<String, Long> bytesByClass) {
    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");
    private static final Pattern TOTAL = Pattern.compile("^Total\\s+(\\d+)\\s+(\\d+)");

    /**
     * @param pid a JVM of this user (a broker the harness started)
     * @return its class histogram after a full GC
     * @throws IOException if jcmd cannot run, fails or prints no total
     * @throws InterruptedException if interrupted while jcmd runs (it is killed)
     */
    static ClassHistogram of(long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(jcmdOf(pid), Long.toString(pid), "GC.class_histogram")
                .redirectErrorStream(true)
                .start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                throw new IOException("jcmd " + pid + " GC.class_histogram did not end within 120 s");
            }
        } finally {
            p.destroyForcibly();
        }
        return parse(out);
    }

    /**
     * @param out jcmd's output
     * @return the histogram it shows
     * @throws IOException if it has no {@code Total} line
     */
    static ClassHistogram parse(String out) throws IOException {
        Map<String, Long> byClass = new HashMap<>();
        for (String line : out.split("\n")) {
            Matcher row = ROW.matcher(line);
            if (row.find()) {
                byClass.merge(row.group(3), Long.parseLong(row.group(2)), Long::sum);
                continue;
            }
            Matcher total = TOTAL.matcher(line.trim());
            if (total.find()) {
                return new ClassHistogram(Long.parseLong(total.group(2)), Long.parseLong(total.group(1)), byClass);
            }
        }
        throw new IOException("no class histogram in jcmd's output: "
                + out.substring(0, Math.min(out.length(), 300)).replace('\n', ' '));
    }

    /**
     * @param before the earlier histogram
     * @param top how many classes
     * @return the {@code top} classes that grew most from {@code before} to this, bytes each, largest first
     */
    Map<String, Long> growthSince(ClassHistogram before, int top) {
        List<Map.Entry<String, Long>> grown = bytesByClass.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.bytesByClass.getOrDefault(e.getKey(), 0L)))
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .limit(top)
                .toList();
        Map<String, Long> m = new LinkedHashMap<>();
        grown.forEach(e -> m.put(e.getKey(), e.getValue()));
        return m;
    }

    /** @return the jcmd next to the JVM's own java, else jcmd on the PATH */
    private static String jcmdOf(long pid) {
        return ProcessHandle.of(pid)
                .flatMap(h -> h.info().command())
                .map(java -> Path.of(java).resolveSibling("jcmd"))
                .filter(Files::isExecutable)
                .map(Path::toString)
                .orElse("jcmd");
    }
}
