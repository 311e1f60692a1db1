// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.classify.DispatchPoint;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.classify.RequestClass;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The API tables of docs/design.md ("The table of pipelined APIs") and docs/kip.md ("The dispatch table") agree with
 * {@link PipelinedApi}: every row once, and per row its class, its dispatch point and (design.md) the settings that
 * turn it off. The prose of each cell is the docs' own; a changed row fails here until the tables say the same.
 */
class ApiTablesTest {
    private static final Pattern KEY = Pattern.compile("`(kpipe\\.[a-z.]+)`");

    @Test
    void designMdTableIsTheRows() throws IOException {
        List<String[]> rows = table("design.md", "| API | class | dispatch point: the order-defining step | setting |");
        Set<PipelinedApi> seen = EnumSet.noneOf(PipelinedApi.class);
        for (String[] cells : rows) {
            for (PipelinedApi row : apis(cells[0], seen)) {
                String where = "design.md, " + row + ": ";
                assertEquals(row.requestClass() == RequestClass.PIPELINED ? "upgrades" : "rides", cells[1], where);
                if (row.dispatchPoint() == DispatchPoint.AFTER_VERIFICATION) {
                    assertTrue(cells[2].contains("verif"), where + "its dispatch point is after the verification");
                } else {
                    assertTrue(
                            cells[2].startsWith("handle-return") && !cells[2].contains("verif"),
                            where + "its dispatch point is handle-return");
                }
                assertEquals(settings(row), settings(cells[3]), where + "the settings that turn it off");
            }
        }
        assertEquals(EnumSet.allOf(PipelinedApi.class), seen, "design.md's table has every row");
    }

    @Test
    void kipMdTableIsTheRows() throws IOException {
        List<String[]> rows = table("kip.md", "| API | kpipe's class | dispatch point | how a broker reports it |");
        Set<PipelinedApi> seen = EnumSet.noneOf(PipelinedApi.class);
        for (String[] cells : rows) {
            for (PipelinedApi row : apis(cells[0], seen)) {
                String where = "kip.md, " + row + ": ";
                assertTrue(
                        cells[1].startsWith(row.requestClass() == RequestClass.PIPELINED ? "upgrades" : "rides"),
                        where);
                assertEquals("`" + row.dispatchPoint() + "`", cells[2], where);
            }
        }
        assertEquals(EnumSet.allOf(PipelinedApi.class), seen, "kip.md's table has every row");
    }

    /** @return what turns the row off, as design.md names it: the topic policy, then the keys, sorted */
    private static Set<String> settings(PipelinedApi row) {
        Set<String> out = new TreeSet<>();
        if (row.topicPolicy()) {
            out.add("topic policy");
        }
        if (row.turnedOffBy().key() != null) {
            out.add(row.turnedOffBy().key());
        }
        if (row.hasTransactionalRequests()) {
            out.add(PipelinedApi.Switch.TRANSACTIONS.key());
        }
        return out;
    }

    /** @return what a setting cell names: "topic policy" if it says so, and every {@code kpipe.*} key in backticks */
    private static Set<String> settings(String cell) {
        Set<String> out = new TreeSet<>();
        if (cell.contains("topic policy")) {
            out.add("topic policy");
        }
        Matcher m = KEY.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** @return the rows an API cell names (comma-separated), each added to {@code seen} once */
    private static List<PipelinedApi> apis(String cell, Set<PipelinedApi> seen) {
        List<PipelinedApi> out = new ArrayList<>();
        for (String name : cell.split(",")) {
            PipelinedApi row = PipelinedApi.valueOf(name.strip());
            assertTrue(seen.add(row), row + " is in the table twice");
            out.add(row);
        }
        return out;
    }

    /** @return the cells of each body row of the table under {@code header} in {@code docs/<file>} */
    private static List<String[]> table(String file, String header) throws IOException {
        Path path = Path.of("..", "docs", file).toAbsolutePath().normalize();
        List<String> lines = Files.readAllLines(path);
        int at = lines.indexOf(header);
        assertTrue(at >= 0, file + " has no table " + header);
        List<String[]> rows = new ArrayList<>();
        for (int i = at + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String line = lines.get(i);
            String[] cells = line.substring(1, line.length() - 1).split("\\|");
            for (int c = 0; c < cells.length; c++) {
                cells[c] = cells[c].strip();
            }
            assertEquals(4, cells.length, file + ": " + line);
            rows.add(cells);
        }
        return rows;
    }
}
