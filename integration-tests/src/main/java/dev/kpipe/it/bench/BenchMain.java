// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.HarnessSettings;
import dev.kpipe.it.soak.SoakMain;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * The kpipe benchmark and demo, from the command line: runs scenario S1 (pipelining over a slow-ack path) and/or S2
 * (no regression on a saturated broker, see {@link Scenarios}) against the same Kafka distribution without kpipe
 * ("stock") and with kpipe, in alternating rounds, and prints a table (records/s, produce requests/s, p50/p99
 * latency, kpipe/stock ratios, S1's ceiling and the targets). Results also go to {@code
 * integration-tests/target/bench/bench-<time>.json}.
 *
 * <pre>
 * BenchMain demo                                  # S1, W = 100 ms, 3 rounds x 15 s per side: under 3 minutes
 * BenchMain --scenario all --window-ms 100,250 --rounds 5 --duration-s 30
 * BenchMain --scenario sweep                    # S1 at W = 10..500 ms, a table and a PNG chart ({@link Sweep})
 * BenchMain --scenario S2F,S1L --rounds 6        # S2 at a fixed load with an A/A run; S1 with 1 MiB batches
 * BenchMain --scenario S8 --window-ms 1,2,5,10  # acks=all at a fixed load, 16 producers, A/A, one run per W
 * BenchMain --scenario S9 --rounds 4           # a good producer beside 8 slow readers, W = 2 ms ({@link S9Round})
 * BenchMain --scenario S10 --s10-connections 1000,5000  # raw connections at scale ({@link S10Round})
 * BenchMain --scenario S11 --rounds 4          # 50 producers on a topic kpipe excludes beside 5 pipelined, W = 2 ms
 * BenchMain --scenario S6,S7 --rounds 3         # offset commits on slow acks ({@link CommitBench}): stock, kpipe,
 *                                               # kpipe-excl (kpipe.offset.commits.pipelined=false)
 * BenchMain --scenario soak --duration-s 1200    # the reliability soak instead ({@link SoakMain})
 * </pre>
 *
 * Both clusters of a scenario are started once and kept up for its rounds; only the one under test gets load.
 * Broker JVMs are stopped when the run ends, and by the harness's shutdown hook on Ctrl-C. The table goes to stdout,
 * the progress line and logs to stderr. Single-threaded apart from the producers' threads ({@link LoadRound}) and
 * the progress printer ({@link Progress}). Exit code 0 when all rounds ran (targets met or not), 1 on failure, 2 on
 * bad arguments, 130 on Ctrl-C.
 */
public final class BenchMain {
    private static final AtomicBoolean INTERRUPTED = new AtomicBoolean();
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private final BenchOptions options;
    private final HarnessSettings settings;
    private final PrintStream out = System.out;
    private final Progress progress;
    private final Path jsonFile;
    private final Map<String, Object> run = new LinkedHashMap<>();
    private final List<Report> reports = new ArrayList<>();
    private final List<CommitReport> commitReports = new ArrayList<>();
    private final Map<String, Object> pinning;

    private BenchMain(
            BenchOptions options,
            HarnessSettings settings,
            Progress progress,
            Path jsonFile,
            Map<String, Object> pinning) {
        this.options = options;
        this.pinning = pinning;
        this.settings = settings;
        this.progress = progress;
        this.jsonFile = jsonFile;
    }

    /**
     * Runs the benchmark; see the class documentation for the arguments ({@code --help} lists them).
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        if (SoakMain.wanted(args)) { // --scenario soak: the reliability soak, not a stock-vs-kpipe comparison
            System.exit(SoakMain.run(args));
            return;
        }
        BenchOptions o;
        try {
            if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) { // anywhere, as soak's
                System.out.print(BenchOptions.USAGE);
                return;
            }
            o = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.print(BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        try {
            Pinning.check(o.sides()); // a missing taskset or CPU: the flag's message, without a stack trace
        } catch (IllegalArgumentException | IOException | InterruptedException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        int code;
        try {
            code = run(o);
        } catch (Exception e) {
            if (INTERRUPTED.get()) {
                return; // Ctrl-C: the JVM is exiting; failures of the interrupted round are expected
            }
            System.err.println("\nbenchmark failed: " + e);
            e.printStackTrace();
            code = 1;
        }
        System.exit(code);
    }

    private static int run(BenchOptions o) throws Exception {
        BenchSetup.configureHarness(o);
        Map<String, Object> pinning = Pinning.apply(o.sides()); // sets the harness's kpipe.it.broker.cpus
        HarnessSettings settings = HarnessSettings.load();
        settings.kafkaHome(); // fails early with a hint if the distribution is not laid out
        BenchSetup.checkPluginJar(settings.pluginJar());
        Path outDir =
                o.outDir() != null ? o.outDir() : settings.workDir().getParent().resolve("bench");
        Files.createDirectories(outDir);
        Path json = outDir.resolve("bench-" + LocalDateTime.now().format(TS) + (o.demo() ? "-demo" : "") + ".json");
        boolean tty =
                Boolean.parseBoolean(System.getProperty("kpipe.bench.tty", Boolean.toString(System.console() != null)));
        AtomicBoolean done = new AtomicBoolean();
        try (Progress progress = new Progress(System.err, tty)) {
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                if (!done.get()) {
                                    INTERRUPTED.set(true);
                                    progress.stop();
                                    System.err.println(
                                            "\nbench: interrupted; the harness's shutdown hook stops the brokers."
                                                    + (Files.exists(json) ? " Results so far: " + json : ""));
                                }
                            },
                            "bench-interrupt"));
            return new BenchMain(o, settings, progress, json, pinning).runAll();
        } finally {
            done.set(true);
        }
    }

    private int runAll() throws Exception {
        List<Scenario> scenarios = ScenarioPlan.scenarios(options);
        List<CommitScenario> commitScenarios = ScenarioPlan.commitScenarios(options);
        run.put("started", LocalDateTime.now().toString());
        run.put("mode", options.demo() ? "demo" : "bench");
        run.put("kafka_version", settings.kafkaVersion());
        run.put("kafka_home", settings.kafkaHome().toString());
        run.put("kpipe_version", settings.pluginVersion());
        run.put("options", optionsMap());
        run.put("host", HostInfo.hostMap());
        run.putAll(SideSetup.runMap(pinning, options.sides()));
        Map<String, Object> clients = new LinkedHashMap<>();
        for (BenchClient c : ClientRound.external(scenarios)) { // fails early, saying what is missing
            clients.put(c.id, ClientProcess.prepare(c, buildDir()));
        }
        if (!clients.isEmpty()) {
            run.put("clients", clients);
        }
        List<String> foreign = HostInfo.foreignBrokers();
        run.put("other_kafka_jvms_at_start", foreign);
        if (!foreign.isEmpty()) {
            System.err.println("bench: WARNING: " + foreign.size() + " other Kafka JVM(s) running on this machine;"
                    + " they compete for CPU and can disturb the numbers: " + foreign);
        }
        List<Object> scenarioMaps = new ArrayList<>();
        run.put("scenarios", scenarioMaps);
        out.printf(
                Locale.ROOT,
                "kpipe benchmark: Kafka %s, stock vs kpipe %s, %s, %d rounds x %d s per side; %d CPU(s)%n",
                settings.kafkaVersion(),
                settings.pluginVersion(),
                java.util.stream.Stream.concat(
                                scenarios.stream().map(s -> s.label),
                                commitScenarios.stream().map(CommitScenario::label))
                        .collect(Collectors.joining(", ")),
                options.rounds(),
                options.durationSeconds(),
                HostInfo.cpus());
        out.print(SideSetup.header(pinning, options.sides()));
        for (Scenario s : scenarios) {
            reports.add(runScenario(s, scenarioMaps));
        }
        for (CommitScenario s : commitScenarios) {
            CommitReport r = CommitBench.run(s, options, settings, progress, out);
            commitReports.add(r);
            scenarioMaps.add(r.toMap(options));
            writeJson();
        }
        List<Report> clientReports = ClientsTable.clientReports(reports);
        if (!clientReports.isEmpty()) {
            run.put("clients_summary", ClientsTable.rows(clientReports));
        }
        Sweep sweep = options.sweep() ? Sweep.of(reports) : null;
        Path chart = sweep != null ? sweep(sweep) : null;
        run.put("finished", LocalDateTime.now().toString());
        run.put("elapsed_s", progress.elapsedSeconds());
        run.put("other_kafka_jvms_at_end", HostInfo.foreignBrokers());
        writeJson();
        progress.clear();
        if (reports.size() + commitReports.size() > 1) {
            out.println();
            out.println("==== summary (" + fmtElapsed(progress.elapsedSeconds()) + ") ====");
            for (Report r : reports) {
                out.println();
                out.print(r.table(options));
            }
            for (CommitReport r : commitReports) {
                out.println();
                out.print(r.table(options));
            }
        }
        if (!clientReports.isEmpty()) {
            out.println();
            out.print(ClientsTable.of(clientReports));
        }
        if (sweep != null) {
            out.println();
            out.print(sweep.table());
        }
        out.println();
        out.println("results: " + jsonFile);
        if (chart != null) {
            out.println("chart:   " + chart);
        }
        out.flush();
        return 0;
    }

    /**
     * Draws the sweep's chart next to the JSON and adds the JSON section {@code sweep}.
     *
     * @param sweep the run's S1 rounds summed up
     * @return the chart's path, or null if it could not be drawn (the reason goes to stderr; the results stand)
     */
    private Path sweep(Sweep sweep) {
        Path png = Sweep.chartPath(jsonFile);
        try {
            sweep.writeChart(png, settings.kafkaVersion(), options);
        } catch (IOException | RuntimeException | LinkageError e) { // the chart is optional: keep the numbers
            System.err.println("bench: the sweep chart could not be drawn (" + chartFailure(e) + "): " + e);
            png = null;
        }
        run.put("sweep", sweep.toMap(png));
        return png;
    }

    /**
     * @param e why the chart could not be drawn
     * @return what to do about it: a class missing means the chart library is not on the class path (a build from
     *     before the chart, or a class path without target/bench-libs); anything else is most often a headless JVM
     *     without fonts
     */
    static String chartFailure(Throwable e) {
        if (e instanceof NoClassDefFoundError) {
            return "the chart library, JFreeChart, is not on the class path: rebuild (demo.sh without SKIP_BUILD=1, or mvn"
                    + " package -DskipTests) so that integration-tests/target/bench-libs has it";
        }
        return "if no font is installed, on Debian: apt-get install fonts-dejavu-core";
    }

    /**
     * Starts both clusters, runs the alternating rounds, prints the scenario's table (before the clusters stop, so the
     * result shows at once), records it in the JSON and stops the clusters.
     */
    private Report runScenario(Scenario s, List<Object> scenarioMaps) throws Exception {
        Report report = new Report(s);
        progress.context(s.label + ": starting stock and kpipe clusters");
        Cluster[] clusters = BenchClusters.start(s, options, settings, progress);
        Cluster stock = clusters[0];
        Cluster kpipe = clusters[1];
        Cluster control = clusters.length > 2 ? clusters[2] : null;
        try {
            progress.context(s.label + ": creating topics");
            for (Cluster c : clusters) {
                BenchClusters.createTopic(c, s);
            }
            if (s.isS9() && options.raw().s9SlowQuotaKib() > 0) {
                progress.context(s.label + ": setting the slow readers' quota");
                String done = SlowReaderQuota.setAll(clusters, options.raw().s9SlowQuotaKib());
                progress.clear();
                out.println(s.label + ": " + done);
            }
            for (int round = 1; round <= options.rounds(); round++) {
                for (Cluster c : RoundOrder.of(round, stock, kpipe, control)) {
                    Variant v = c == kpipe ? Variant.KPIPE : Variant.STOCK;
                    String side = c == control ? RoundOrder.CONTROL_LABEL : v.label();
                    progress.context(
                            String.format(Locale.ROOT, "%s round %d/%d %s", s.label, round, options.rounds(), side));
                    double loadBefore = LoadAverage.beforeRound(options.sides(), progress, out);
                    RoundResult r =
                            runRound(s, c, v, round).withExtra(LoadAverage.around(loadBefore, LoadAverage.now()));
                    if (c == kpipe) {
                        r = SideSetup.withObserverEvidence(r, options.sides(), c);
                    }
                    if (c == control) {
                        report.addControl(r);
                    } else {
                        report.add(r);
                    }
                    progress.clear();
                    out.println(
                            c == control
                                    ? r.line().replace(" stock:", " " + RoundOrder.CONTROL_LABEL + ":")
                                    : r.line());
                    out.flush();
                }
            }
            scenarioMaps.add(report.toMap(options));
            writeJson();
            progress.clear();
            out.println();
            out.print(report.table(options));
            if (options.demo() && report.hasPairs() && s.id.equals("S1")) {
                out.println();
                out.println(ScenarioText.demoSentence(report, settings.kafkaVersion()));
            }
            out.flush();
        } finally {
            progress.context(s.label + ": stopping clusters");
            long t0 = System.nanoTime();
            if (!options.jfr()) { // nothing to keep: SIGKILL is much faster than controlled shutdown
                for (Cluster c : clusters) {
                    c.nodes().forEach(n -> n.kill());
                }
            }
            try {
                if (control != null) {
                    control.close();
                }
            } finally {
                try {
                    kpipe.close();
                } finally {
                    stock.close();
                }
            }
            progress.clear();
            System.err.printf(
                    Locale.ROOT, "bench: %s clusters stopped in %.1f s%n", s.label, (System.nanoTime() - t0) / 1e9);
        }
        return report;
    }

    /** Runs one round of {@code s} on cluster {@code c}: the round kind the scenario needs. */
    private RoundResult runRound(Scenario s, Cluster c, Variant v, int round) throws Exception {
        int warmup = options.warmupSeconds();
        int duration = options.durationSeconds();
        if (s.isS10()) {
            return new S10Round(c, s, v, round, progress).run(warmup, duration);
        }
        if (s.isS9()) {
            return new S9Round(c, s, v, round, progress).run(warmup, duration);
        }
        if (s.isChildProcessClient()) {
            return new ClientRound(c, s, v, round, progress, buildDir()).run(warmup, duration);
        }
        return new LoadRound(c, s, v, round, progress).run(warmup, duration);
    }

    /** @return {@code integration-tests/target}: where KafkaJS is installed ({@link ClientProcess#prepare}) */
    private Path buildDir() {
        return settings.workDir().getParent();
    }

    private void writeJson() throws IOException {
        Files.writeString(jsonFile, Json.write(run));
    }

    private Map<String, Object> optionsMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenarios", options.scenarios());
        m.put("sweep", options.sweep());
        m.put("window_ms", options.windowsMs());
        m.put("rounds", options.rounds());
        m.put("duration_s", options.durationSeconds());
        m.put("warmup_s", options.warmupSeconds());
        m.put("stock", options.stockInstallsPlugin() ? "kpipe installed, kpipe.enable=false" : "kpipe not installed");
        m.put("broker_heap", options.brokerHeap());
        m.put(
                "broker_jvm_opts",
                settings.extraJvmOptions().length == 0 ? "" : String.join(" ", settings.extraJvmOptions()));
        m.put("parallel_start", options.parallelStart());
        m.put("clients", options.measure().clients().stream().map(c -> c.id).toList());
        m.put("s8_records_per_s", options.measure().s8RecordsPerSec());
        m.put("s8_producers", options.measure().s8Producers());
        m.put("s8_linger_ms", options.measure().s8LingerMs());
        m.put("s8_kpipe_linger_ms", options.measure().s8KpipeLingerMs());
        m.put("s6_records_per_s", options.commits().s6RecordsPerSec());
        m.put("s7_input_records", options.commits().s7InputRecords());
        m.put("kpipe_excl_side", options.commits().excl());
        m.put("s9_slow_readers", options.raw().s9SlowReaders());
        m.put("s9_window_ms", options.raw().s9WindowsMs());
        m.put("s9_slow_quota_kib", options.raw().s9SlowQuotaKib());
        m.put("s9_slow_reader_client_id", SlowReaders.CLIENT_ID);
        m.putAll(SideSetup.optionsMap(options.sides()));
        m.put("s10_connections", options.raw().s10Connections());
        return m;
    }

    private static String fmtElapsed(long s) {
        return String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
    }
}
