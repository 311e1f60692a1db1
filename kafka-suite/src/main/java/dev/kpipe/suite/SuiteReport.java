// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.suite;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Compares the two runs of Kafka's own suite (surefire executions "stock" and "kpipe" of kafka-suite/pom.xml) and
 * writes the per-class report: {@code <out>.tsv} and {@code <out>.md}.
 *
 * <p>Per class: tests run, passed, failed (failures and errors) and skipped on each side, the kpipe runtimes started
 * in the kpipe run ("kpipe VERSION started" lines of logger dev.kpipe.plugin.KpipeRuntime) and the requests they
 * pipelined (the sum of "kpipe VERSION stopped on node N: M requests pipelined" over the class's brokers), read from
 * surefire's {@code <class>-output.txt}.
 *
 * <p>The build fails (the exception ends the exec goal) when a test that passed on stock failed, erred or did not run
 * on kpipe; when no class ran; and, with {@code --check-pipelined=true}, when a class named in
 * {@code --pipelined-required} ran and pipelined nothing. A test that fails on both sides, or on stock only (a flaky
 * test of Kafka's), is reported and does not fail the build.
 */
public final class SuiteReport {

    static final Pattern STARTED = Pattern.compile("kpipe \\S+ started");
    static final Pattern STOPPED = Pattern.compile("kpipe \\S+ stopped on node (-?\\d+): (\\d+) requests pipelined");

    enum Outcome {
        PASSED,
        FAILED,
        SKIPPED
    }

    /** One test case of one run: its outcome and, when it failed, the first line of the message. */
    record Case(Outcome outcome, String message) {}

    /** One class of one run. */
    static final class ClassRun {
        final Map<String, Case> cases = new LinkedHashMap<>();
        double seconds;
        int kpipeStarted;
        long pipelined;
        boolean present;

        int count(Outcome outcome) {
            return (int)
                    cases.values().stream().filter(c -> c.outcome() == outcome).count();
        }
    }

    /** A test that passed on one side and not on the other, or failed on both. */
    record Difference(String testClass, String test, Case stock, Case kpipe) {}

    private SuiteReport() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("expected --key=value, got " + arg);
            }
            opts.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        Path stockDir = Path.of(required(opts, "stock"));
        Path kpipeDir = Path.of(required(opts, "kpipe"));
        Path out = Path.of(required(opts, "out"));
        boolean checkPipelined = Boolean.parseBoolean(opts.getOrDefault("check-pipelined", "false"));
        boolean reportOnly = Boolean.parseBoolean(opts.getOrDefault("report-only", "false"));
        Set<String> pipelinedRequired = Arrays.stream(
                        opts.getOrDefault("pipelined-required", "").split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .collect(Collectors.toCollection(TreeSet::new));

        Map<String, ClassRun> stock = readRun(stockDir);
        Map<String, ClassRun> kpipe = readRun(kpipeDir);
        Report report = new Report(stock, kpipe);

        String header = "Kafka " + opts.getOrDefault("kafka-version", "?") + ", tests `"
                + opts.getOrDefault("tests", "?") + "`, "
                + ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z", Locale.ROOT))
                + ", load average " + loadAverage();
        Files.createDirectories(out.toAbsolutePath().getParent());
        Path tsv = out.resolveSibling(out.getFileName() + ".tsv");
        Path md = out.resolveSibling(out.getFileName() + ".md");
        Files.writeString(tsv, report.tsv(), StandardCharsets.UTF_8);
        Files.writeString(md, report.markdown(header), StandardCharsets.UTF_8);
        System.out.println(report.markdown(header));
        System.out.println("Written: " + tsv + " and " + md);

        List<String> problems = new ArrayList<>();
        if (report.classes().isEmpty()) {
            problems.add("no test class ran (check -Dsuite.tests)");
        }
        for (Difference d : report.kpipeOnly()) {
            problems.add("passed on stock, not with kpipe: " + d.testClass() + " " + d.test() + ": "
                    + (d.kpipe() == null ? "did not run" : d.kpipe().message()));
        }
        if (checkPipelined) {
            for (String cls : report.classes()) {
                ClassRun k = kpipe.get(cls);
                if (pipelinedRequired.contains(cls) && k != null && k.present && k.pipelined == 0) {
                    problems.add(cls + ": 0 requests pipelined in the kpipe run (" + k.kpipeStarted
                            + " kpipe runtimes started)");
                }
            }
        }
        if (!problems.isEmpty()) {
            String message = "Kafka's suite, stock against kpipe:\n  " + String.join("\n  ", problems);
            if (reportOnly) {
                System.out.println("suite.report.only=true, not failing on:\n  " + String.join("\n  ", problems));
            } else {
                throw new IllegalStateException(message);
            }
        }
    }

    private static String required(Map<String, String> opts, String key) {
        String value = opts.get(key);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return value;
    }

    static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + ", " + parts[1] + ", " + parts[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** The classes of one run's reports directory: TEST-*.xml plus the kpipe lines of each *-output.txt. */
    static Map<String, ClassRun> readRun(Path dir) throws Exception {
        Map<String, ClassRun> runs = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return runs;
        }
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.sorted().collect(Collectors.toList());
        }
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        for (Path file : files) {
            String name = file.getFileName().toString();
            if (name.startsWith("TEST-") && name.endsWith(".xml")) {
                Element suite =
                        factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
                String cls = suite.getAttribute("name");
                ClassRun run = runs.computeIfAbsent(cls, c -> new ClassRun());
                run.present = true;
                run.seconds += parseDouble(suite.getAttribute("time"));
                NodeList cases = suite.getElementsByTagName("testcase");
                for (int i = 0; i < cases.getLength(); i++) {
                    Element tc = (Element) cases.item(i);
                    String test = tc.getAttribute("name");
                    String key = test;
                    for (int n = 2; run.cases.containsKey(key); n++) {
                        key = test + " #" + n;
                    }
                    run.cases.put(key, outcome(tc));
                }
            } else if (name.endsWith("-output.txt")) {
                String cls = name.substring(0, name.length() - "-output.txt".length());
                ClassRun run = runs.computeIfAbsent(cls, c -> new ClassRun());
                try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
                    lines.forEach(line -> {
                        if (STARTED.matcher(line).find()) {
                            run.kpipeStarted++;
                        }
                        Matcher m = STOPPED.matcher(line);
                        if (m.find()) {
                            run.pipelined += Long.parseLong(m.group(2));
                        }
                    });
                } catch (java.io.UncheckedIOException e) {
                    // A test that writes bytes of another charset: count what was read.
                }
            }
        }
        runs.values().removeIf(r -> !r.present && r.kpipeStarted == 0);
        return runs;
    }

    private static double parseDouble(String s) {
        try {
            return Double.parseDouble(s.replace(",", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Case outcome(Element tc) {
        for (Node child = tc.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof Element e) {
                switch (e.getTagName()) {
                    case "failure", "error" -> {
                        String message = e.getAttribute("message");
                        if (message.isBlank()) {
                            message = e.getAttribute("type");
                        }
                        return new Case(Outcome.FAILED, firstLine(message));
                    }
                    case "skipped" -> {
                        return new Case(Outcome.SKIPPED, firstLine(e.getAttribute("message")));
                    }
                    default -> {}
                }
            }
        }
        return new Case(Outcome.PASSED, "");
    }

    static String firstLine(String s) {
        String line = s.strip().lines().findFirst().orElse("");
        return line.length() > 240 ? line.substring(0, 240) + "..." : line;
    }

    /** The comparison of the two runs. */
    record Report(Map<String, ClassRun> stock, Map<String, ClassRun> kpipe) {

        Set<String> classes() {
            Set<String> all = new TreeSet<>(stock.keySet());
            all.addAll(kpipe.keySet());
            all.removeIf(c -> !side(stock, c).present && !side(kpipe, c).present);
            return all;
        }

        private static ClassRun side(Map<String, ClassRun> run, String cls) {
            return run.getOrDefault(cls, new ClassRun());
        }

        List<Difference> differences() {
            List<Difference> out = new ArrayList<>();
            for (String cls : classes()) {
                ClassRun s = side(stock, cls);
                ClassRun k = side(kpipe, cls);
                Set<String> tests = new java.util.LinkedHashSet<>(s.cases.keySet());
                tests.addAll(k.cases.keySet());
                for (String test : tests) {
                    Case sc = s.cases.get(test);
                    Case kc = k.cases.get(test);
                    boolean sPass = sc != null && sc.outcome() == Outcome.PASSED;
                    boolean kPass = kc != null && kc.outcome() == Outcome.PASSED;
                    boolean sFail = sc == null || sc.outcome() == Outcome.FAILED;
                    boolean kFail = kc == null || kc.outcome() == Outcome.FAILED;
                    if ((sPass && kFail) || (kPass && sFail) || (sFail && kFail)) {
                        out.add(new Difference(cls, test, sc, kc));
                    }
                }
            }
            return out;
        }

        /** Passed on stock; failed, erred or did not run with kpipe. */
        List<Difference> kpipeOnly() {
            return differences().stream()
                    .filter(d -> d.stock() != null && d.stock().outcome() == Outcome.PASSED)
                    .collect(Collectors.toList());
        }

        List<Difference> stockOnly() {
            return differences().stream()
                    .filter(d -> d.kpipe() != null && d.kpipe().outcome() == Outcome.PASSED)
                    .collect(Collectors.toList());
        }

        List<Difference> both() {
            return differences().stream()
                    .filter(d -> (d.stock() == null || d.stock().outcome() == Outcome.FAILED)
                            && (d.kpipe() == null || d.kpipe().outcome() == Outcome.FAILED))
                    .collect(Collectors.toList());
        }

        String verdict(String cls) {
            long kOnly =
                    kpipeOnly().stream().filter(d -> d.testClass().equals(cls)).count();
            long sOnly =
                    stockOnly().stream().filter(d -> d.testClass().equals(cls)).count();
            long b = both().stream().filter(d -> d.testClass().equals(cls)).count();
            List<String> parts = new ArrayList<>();
            if (!side(stock, cls).present) {
                parts.add("no stock result");
            }
            if (!side(kpipe, cls).present) {
                parts.add("no kpipe result");
            }
            if (kOnly > 0) {
                parts.add(kOnly + " fail with kpipe only");
            }
            if (sOnly > 0) {
                parts.add(sOnly + " fail on stock only");
            }
            if (b > 0) {
                parts.add(b + " fail on both");
            }
            return parts.isEmpty() ? "same" : String.join("; ", parts);
        }

        static final String[] COLUMNS = {
            "class",
            "stock_tests",
            "stock_passed",
            "stock_failed",
            "stock_skipped",
            "stock_s",
            "kpipe_tests",
            "kpipe_passed",
            "kpipe_failed",
            "kpipe_skipped",
            "kpipe_s",
            "kpipe_runtimes",
            "pipelined",
            "verdict"
        };

        List<List<String>> rows() {
            List<List<String>> rows = new ArrayList<>();
            for (String cls : classes()) {
                ClassRun s = side(stock, cls);
                ClassRun k = side(kpipe, cls);
                rows.add(List.of(
                        cls,
                        String.valueOf(s.cases.size()),
                        String.valueOf(s.count(Outcome.PASSED)),
                        String.valueOf(s.count(Outcome.FAILED)),
                        String.valueOf(s.count(Outcome.SKIPPED)),
                        String.format(Locale.ROOT, "%.0f", s.seconds),
                        String.valueOf(k.cases.size()),
                        String.valueOf(k.count(Outcome.PASSED)),
                        String.valueOf(k.count(Outcome.FAILED)),
                        String.valueOf(k.count(Outcome.SKIPPED)),
                        String.format(Locale.ROOT, "%.0f", k.seconds),
                        String.valueOf(k.kpipeStarted),
                        String.valueOf(k.pipelined),
                        verdict(cls)));
            }
            return rows;
        }

        String tsv() {
            StringBuilder sb = new StringBuilder(String.join("\t", COLUMNS)).append('\n');
            for (List<String> row : rows()) {
                sb.append(String.join("\t", row)).append('\n');
            }
            return sb.toString();
        }

        String markdown(String header) {
            StringBuilder sb = new StringBuilder("# Kafka's own suite, stock against kpipe\n\n")
                    .append(header)
                    .append("\n\n");
            sb.append(
                    "| class | stock run | passed | failed | skipped | s | kpipe run | passed | failed | skipped | s |"
                            + " kpipe runtimes | pipelined | verdict |\n");
            sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
            for (List<String> row : rows()) {
                List<String> cells = new ArrayList<>(row);
                cells.set(0, "`" + cells.get(0) + "`");
                sb.append("| ").append(String.join(" | ", cells)).append(" |\n");
            }
            section(sb, "Pass on stock, fail with kpipe (fails the build)", kpipeOnly());
            section(sb, "Fail on stock, pass with kpipe (flaky on stock; reported only)", stockOnly());
            section(sb, "Fail on both (reported only)", both());
            return sb.toString();
        }

        private static void section(StringBuilder sb, String title, List<Difference> diffs) {
            sb.append("\n## ").append(title).append(": ").append(diffs.size()).append('\n');
            for (Difference d : diffs) {
                sb.append("\n- `")
                        .append(d.testClass())
                        .append(" ")
                        .append(d.test())
                        .append("`: stock ")
                        .append(describe(d.stock()))
                        .append("; kpipe ")
                        .append(describe(d.kpipe()));
            }
            if (!diffs.isEmpty()) {
                sb.append('\n');
            }
        }

        private static String describe(Case c) {
            if (c == null) {
                return "did not run";
            }
            return c.outcome() == Outcome.FAILED
                    ? "failed (" + c.message().replace("|", "\\|") + ")"
                    : c.outcome().name().toLowerCase(Locale.ROOT);
        }
    }
}
