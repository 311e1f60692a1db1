// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.TickType;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws the S1 sweep as a PNG with JFreeChart: records/s against W, both axes log scale, stock Kafka and kpipe as
 * lines with points (medians over the rounds), and their ceilings as dashed lines: stock {@code 1/W} requests/s and
 * kpipe {@code in-flight/W} requests/s, each times the records per request measured over the sweep; kpipe/stock at
 * each W is written under kpipe's point.
 *
 * <p>Renders headless (sets {@code java.awt.headless=true} unless already set); needs a font the JDK can find (on
 * Debian, {@code fonts-dejavu-core}). Stateless; any thread.
 */
final class SweepChart {
    /** Width of the PNG, pixels. */
    static final int WIDTH = 1000;
    /** Height of the PNG, pixels. */
    static final int HEIGHT = 640;

    private static final Color STOCK = new Color(0xD6, 0x27, 0x28);
    private static final Color KPIPE = new Color(0x1F, 0x77, 0xB4);

    private SweepChart() {}

    /**
     * Writes the chart (replacing a file already there).
     *
     * @param points the sweep, one point per W, in any order
     * @param recordsPerRequest records per produce request the ceilings are scaled with
     * @param subtitle the line under the title (cluster, rounds, how records per request was taken)
     * @param png where to write it; its folder must exist
     * @throws IOException if the file cannot be written
     */
    static void write(List<SweepPoint> points, double recordsPerRequest, String subtitle, Path png) throws IOException {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        JFreeChart chart = chart(points, recordsPerRequest, subtitle);
        Path tmp = png.resolveSibling("." + png.getFileName() + ".tmp");
        ChartUtils.saveChartAsPNG(tmp.toFile(), chart, WIDTH, HEIGHT);
        Files.move(tmp, png, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static JFreeChart chart(List<SweepPoint> points, double rpr, String subtitle) {
        XYSeries stock = new XYSeries("stock Kafka (measured, median)");
        XYSeries kpipe = new XYSeries("kpipe (measured, median)");
        XYSeries stockCeiling = new XYSeries("stock ceiling: 1 request / W");
        int inFlight = points.isEmpty() ? 5 : points.get(0).maxInFlight();
        XYSeries kpipeCeiling = new XYSeries("kpipe ceiling: " + inFlight + " requests in flight / W");
        double min = Double.MAX_VALUE;
        double max = 0;
        for (SweepPoint p : points) {
            stock.add(p.windowMs(), p.stockRecordsPerSec().median());
            kpipe.add(p.windowMs(), p.kpipeRecordsPerSec().median());
            stockCeiling.add(p.windowMs(), p.stockCeiling(rpr));
            kpipeCeiling.add(p.windowMs(), p.kpipeCeiling(rpr));
            min = Math.min(min, Math.min(p.stockRecordsPerSec().median(), p.stockCeiling(rpr)));
            max = Math.max(max, Math.max(p.kpipeRecordsPerSec().median(), p.kpipeCeiling(rpr)));
        }
        XYSeriesCollection data = new XYSeriesCollection();
        data.addSeries(kpipeCeiling);
        data.addSeries(kpipe);
        data.addSeries(stockCeiling);
        data.addSeries(stock);

        LogAxis x = new TicksAt(
                points.stream().mapToDouble(SweepPoint::windowMs).toArray(),
                "W: the follower's ack window, replica.fetch.wait.max.ms (ms, log scale)");
        style(x);
        LogAxis y = logAxis("records/s acknowledged, one producer (log scale)");
        if (!points.isEmpty()) {
            int wMin = points.stream().mapToInt(SweepPoint::windowMs).min().getAsInt();
            int wMax = points.stream().mapToInt(SweepPoint::windowMs).max().getAsInt();
            x.setRange(wMin / 1.3, wMax * 1.3);
            y.setRange(min / 1.6, max * 1.6);
        }

        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        BasicStroke dashed =
                new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f);
        BasicStroke solid = new BasicStroke(2.5f);
        style(r, 0, KPIPE, dashed, false);
        style(r, 1, KPIPE, solid, true);
        style(r, 2, STOCK, dashed, false);
        style(r, 3, STOCK, solid, true);
        r.setSeriesShape(1, new Ellipse2D.Double(-5, -5, 10, 10));
        r.setSeriesShape(3, new Rectangle2D.Double(-5, -5, 10, 10));

        XYPlot plot = new XYPlot(data, x, y, r);
        Font small = new Font(Font.SANS_SERIF, Font.BOLD, 12);
        for (SweepPoint p : points) { // the gain at each W, under kpipe's point (its top at 0.72 x the point's value)
            XYTextAnnotation a = new XYTextAnnotation(
                    String.format(Locale.ROOT, "%.1fx", p.ratio().median()),
                    p.windowMs(),
                    p.kpipeRecordsPerSec().median() * 0.72);
            a.setFont(small);
            a.setPaint(KPIPE);
            a.setTextAnchor(TextAnchor.TOP_CENTER);
            plot.addAnnotation(a);
        }
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
        plot.setRangeGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
        JFreeChart chart = new JFreeChart(
                "kpipe S1 sweep: one acks=all producer, records/s against the ack window W",
                new Font(Font.SANS_SERIF, Font.BOLD, 18),
                plot,
                true);
        chart.setBackgroundPaint(Color.WHITE);
        chart.getLegend().setPosition(RectangleEdge.BOTTOM);
        chart.getLegend().setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        chart.getLegend().setItemLabelPadding(new RectangleInsets(2, 4, 2, 18));
        TextTitle note = new TextTitle(
                "labels under kpipe's points: kpipe/stock records/s at that W (median of the" + " round pairs)",
                new Font(Font.SANS_SERIF, Font.ITALIC, 12));
        note.setPosition(RectangleEdge.BOTTOM);
        chart.addSubtitle(note);
        TextTitle sub = new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        sub.setMaximumLinesToDisplay(3);
        chart.addSubtitle(sub);
        return chart;
    }

    private static LogAxis logAxis(String label) {
        LogAxis a = new LogAxis(label);
        style(a);
        return a;
    }

    private static void style(LogAxis a) {
        a.setBase(10);
        a.setSmallestValue(1e-3);
        a.setTickUnit(new NumberTickUnit(1)); // a labelled tick every decade (the unit is log10), minor ticks between
        a.setMinorTickMarksVisible(true);
        a.setMinorTickCount(9);
        DecimalFormat f = new DecimalFormat("#,##0.#", DecimalFormatSymbols.getInstance(Locale.ROOT));
        a.setNumberFormatOverride(f);
        a.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        a.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    }

    /** A horizontal log axis whose labelled ticks (and grid lines) are exactly the sweep's windows W. */
    private static final class TicksAt extends LogAxis {
        private static final long serialVersionUID = 1L;
        private final double[] values;

        TicksAt(double[] values, String label) {
            super(label);
            this.values = values.clone();
        }

        @Override
        @SuppressWarnings("rawtypes") // JFreeChart's signature: LogAxis.refreshTicksHorizontal returns a raw List
        protected List refreshTicksHorizontal(Graphics2D g2, Rectangle2D dataArea, RectangleEdge edge) {
            if (values.length == 0) {
                return super.refreshTicksHorizontal(g2, dataArea, edge);
            }
            List<NumberTick> ticks = new ArrayList<>();
            for (double v : values) {
                ticks.add(new NumberTick(
                        TickType.MAJOR,
                        v,
                        getNumberFormatOverride().format(v),
                        TextAnchor.TOP_CENTER,
                        TextAnchor.CENTER,
                        0.0));
            }
            return ticks;
        }
    }

    private static void style(XYLineAndShapeRenderer r, int series, Color c, BasicStroke stroke, boolean shapes) {
        r.setSeriesPaint(series, c);
        r.setSeriesStroke(series, stroke);
        r.setSeriesShapesVisible(series, shapes);
    }
}
