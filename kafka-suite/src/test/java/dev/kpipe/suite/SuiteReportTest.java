// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SuiteReport on hand-written surefire reports: counts, pipelined requests, what fails the build. */
class SuiteReportTest {

    @TempDir
    Path dir;

    private static String suite(String cls, String... cases) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"" + cls + "\" time=\"12.5\" tests=\""
                + cases.length + "\">\n" + String.join("\n", cases) + "\n</testsuite>\n";
    }

    private static String pass(String name) {
        return "<testcase name=\"" + name + "\" classname=\"c\" time=\"1\"/>";
    }

    private static String fail(String name) {
        return "<testcase name=\"" + name + "\" classname=\"c\" time=\"1\"><failure message=\"expected: &lt;1&gt;"
                + " but was: &lt;2&gt;\nmore\" type=\"org.opentest4j.AssertionFailedError\">trace</failure></testcase>";
    }

    private static String skip(String name) {
        return "<testcase name=\"" + name + "\" classname=\"c\" time=\"0\"><skipped message=\"off\"/></testcase>";
    }

    private void write(String run, String cls, String xml, String output) throws Exception {
        Path d = Files.createDirectories(dir.resolve(run));
        Files.writeString(d.resolve("TEST-" + cls + ".xml"), xml);
        if (output != null) {
            Files.writeString(d.resolve(cls + "-output.txt"), output);
        }
    }

    private String[] args(boolean checkPipelined, String required) {
        return new String[] {
            "--stock=" + dir.resolve("stock"),
            "--kpipe=" + dir.resolve("kpipe"),
            "--out=" + dir.resolve("out/suite-report"),
            "--kafka-version=4.4.0",
            "--tests=x",
            "--check-pipelined=" + checkPipelined,
            "--pipelined-required=" + required,
            "--report-only=false"
        };
    }

    private static final String KPIPE_LINES = "[t] INFO kpipe 0.1.0 started on node 0 (dev.kpipe.plugin.KpipeRuntime)\n"
            + "[t] INFO kpipe 0.1.0 started on node 1 (dev.kpipe.plugin.KpipeRuntime)\n"
            + "[t] INFO kpipe 0.1.0 stopped on node 0: 120 requests pipelined (dev.kpipe.plugin.KpipeRuntime)\n"
            + "[t] INFO kpipe 0.1.0 stopped on node 1: 3 requests pipelined (dev.kpipe.plugin.KpipeRuntime)\n";

    @Test
    void countsAndPipelinedRequestsPerClass() throws Exception {
        write("stock", "a.B", suite("a.B", pass("t1"), pass("t2"), skip("t3")), "nothing of kpipe\n");
        write("kpipe", "a.B", suite("a.B", pass("t1"), pass("t2"), skip("t3")), KPIPE_LINES);

        SuiteReport.main(args(true, "a.B"));

        List<String> tsv = Files.readAllLines(dir.resolve("out/suite-report.tsv"));
        assertEquals(2, tsv.size());
        assertEquals("a.B\t3\t2\t0\t1\t13\t3\t2\t0\t1\t13\t2\t123\tsame", tsv.get(1));
        String md = Files.readString(dir.resolve("out/suite-report.md"));
        assertTrue(md.contains("| `a.B` | 3 | 2 | 0 | 1 | 13 | 3 | 2 | 0 | 1 | 13 | 2 | 123 | same |"), md);
    }

    @Test
    void aTestThatPassesOnStockAndFailsWithKpipeFailsTheBuild() throws Exception {
        write("stock", "a.B", suite("a.B", pass("t1"), pass("t2")), null);
        write("kpipe", "a.B", suite("a.B", pass("t1"), fail("t2")), KPIPE_LINES);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> SuiteReport.main(args(false, "")));
        assertTrue(e.getMessage().contains("a.B t2: expected: <1> but was: <2>"), e.getMessage());
        String md = Files.readString(dir.resolve("out/suite-report.md"));
        assertTrue(md.contains("1 fail with kpipe only"), md);
    }

    @Test
    void aClassMissingFromTheKpipeRunFailsTheBuild() throws Exception {
        write("stock", "a.B", suite("a.B", pass("t1")), null);
        Files.createDirectories(dir.resolve("kpipe"));

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> SuiteReport.main(args(false, "")));
        assertTrue(e.getMessage().contains("a.B t1: did not run"), e.getMessage());
    }

    @Test
    void failuresOnStockOnlyOrOnBothAreReportedNotFailed() throws Exception {
        write("stock", "a.B", suite("a.B", fail("t1"), fail("t2"), pass("t3")), null);
        write("kpipe", "a.B", suite("a.B", pass("t1"), fail("t2"), pass("t3")), KPIPE_LINES);

        SuiteReport.main(args(false, ""));

        String md = Files.readString(dir.resolve("out/suite-report.md"));
        assertTrue(md.contains("1 fail on stock only; 1 fail on both"), md);
        assertTrue(md.contains("## Fail on both (reported only): 1"), md);
    }

    @Test
    void aRequiredClassWithoutPipelinedRequestsFailsOnlyWhenChecked() throws Exception {
        write("stock", "a.B", suite("a.B", pass("t1")), null);
        write("kpipe", "a.B", suite("a.B", pass("t1")), "no kpipe lines\n");
        write("stock", "a.C", suite("a.C", pass("t1")), null);
        write("kpipe", "a.C", suite("a.C", pass("t1")), "no kpipe lines\n");

        SuiteReport.main(args(false, "a.B"));
        SuiteReport.main(args(true, "a.Absent"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> SuiteReport.main(args(true, "a.B")));
        assertTrue(e.getMessage().contains("a.B: 0 requests pipelined"), e.getMessage());
    }

    @Test
    void noClassAtAllFailsTheBuild() throws Exception {
        Files.createDirectories(dir.resolve("stock"));
        Files.createDirectories(dir.resolve("kpipe"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> SuiteReport.main(args(false, "")));
        assertTrue(e.getMessage().contains("no test class ran"), e.getMessage());
    }
}
