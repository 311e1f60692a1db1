// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sweep chart from a fixed set of results: the PNG is written, readable and of the chart's size. No brokers. */
class SweepChartTest {
    private static Report.Stat stat(double median) {
        return new Report.Stat(median, median * 0.95, median * 1.02);
    }

    /** Results shaped like a real sweep: stock near 1/W, kpipe near 5/W, 15 records per request. */
    static List<SweepPoint> points() {
        return Arrays.stream(new int[] {10, 25, 50, 100, 250, 500})
                .mapToObj(w -> {
                    double stock = 0.95 * 15 * 1000.0 / w;
                    double kpipe = 0.93 * 5 * 15 * 1000.0 / w;
                    return new SweepPoint(w, 5, stat(stock), stat(kpipe), stat(kpipe / stock), 15.0);
                })
                .toList();
    }

    @Test
    void writesAPngOfTheChartsSize(@TempDir Path dir) throws Exception {
        Path png = Sweep.chartPath(dir.resolve("bench-20261201-093000.json"));
        assertEquals("bench-20261201-093000-s1-sweep.png", png.getFileName().toString());

        SweepChart.write(points(), 15.0, "fixed results for the test", png);

        assertTrue(
                Files.size(png) > 10_000, "a chart with text and four series, not an empty image: " + Files.size(png));
        byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, "PNG signature");
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(SweepChart.WIDTH, img.getWidth());
        assertEquals(SweepChart.HEIGHT, img.getHeight());
        try (var s = Files.list(dir)) {
            assertEquals(List.of(png), s.toList(), "only the chart, no temporary file left");
        }
    }

    @Test
    void drawsTheShortEndFromOneMs(@TempDir Path dir) throws Exception {
        // docs/benchmark.md, "S1 at short W": a sweep at W = 1, 2, 5, 10 ms draws on the same log axes
        List<SweepPoint> shortEnd = Arrays.stream(new int[] {1, 2, 5, 10})
                .mapToObj(w -> new SweepPoint(w, 5, stat(15 * 600.0 / w), stat(15 * 5 * 600.0 / w), stat(5.0), 15.0))
                .toList();
        Path png = dir.resolve("short-end.png");

        SweepChart.write(shortEnd, 15.0, "fixed results for the test", png);

        assertTrue(Files.size(png) > 10_000, "a chart, not an empty image: " + Files.size(png));
        assertEquals(SweepChart.WIDTH, ImageIO.read(png.toFile()).getWidth());
    }

    @Test
    void ceilingsScaleWithRecordsPerRequest() {
        SweepPoint p = points().get(3); // W = 100 ms
        assertEquals(150.0, p.stockCeiling(15.0), 1e-9, "1 request per 100 ms x 15 records");
        assertEquals(750.0, p.kpipeCeiling(15.0), 1e-9, "5 requests per 100 ms x 15 records");
    }

    @Test
    void theSubtitleSaysWhatTheRunUsed() {
        String sub = Sweep.subtitle("4.4.0", 8, 512, 32768, 2, 12, 15.04);
        assertTrue(sub.contains("Kafka 4.4.0,"), sub);
        assertTrue(sub.contains(" 8 in flight, 512 B records, 32768 B batches; 2 round(s) x 12 s per side"), sub);
        assertTrue(sub.contains(" x 15.0 records per request"), sub);
        assertTrue(Sweep.subtitle("4.4.0", 5, 2048, 16384, 1, 30, 1).contains(" 5 in flight, 2 KiB records,"));
    }
}
