// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The scenarios one run of {@link BenchMain} runs, in order, from its options: one per scenario named with {@code
 * --scenario}, times each W of {@code --window-ms} where the scenario takes one (S9: {@link RawOptions#s9WindowsMs}),
 * each client of {@code --client} (S1) and each connection count of {@code --s10-connections} (S10). Stateless.
 */
final class ScenarioPlan {
    private ScenarioPlan() {}

    /**
     * @param options the run's options
     * @return the producer scenarios ({@link Scenarios}), in the order given
     */
    static List<Scenario> scenarios(BenchOptions options) {
        List<Scenario> scenarios = new ArrayList<>();
        for (String s : options.scenarios()) {
            switch (s) {
                case "S6", "S7" -> {} // commitScenarios
                case "S1" -> {
                    for (int w : options.windowsMs()) {
                        if (options.measure().clients().isEmpty()) {
                            scenarios.add(Scenarios.s1(w, options));
                        }
                        for (BenchClient client : options.measure().clients()) {
                            scenarios.add(Scenarios.s1(w, options, client));
                        }
                    }
                }
                case "S2" -> scenarios.add(Scenarios.s2(options));
                case "S2F" -> scenarios.add(Scenarios.s2Fixed(options));
                case "S1L" -> scenarios.add(Scenarios.s1Large(options));
                case "S5" -> options.windowsMs().forEach(w -> scenarios.add(Scenarios.s5(w, options)));
                case "S8" -> options.windowsMs().forEach(w -> scenarios.add(Scenarios.s8(w, options)));
                case "S9" -> options.raw().s9WindowsMs().forEach(w -> scenarios.add(Scenarios.s9(w, options)));
                case "S11" -> options.fleet().windowsMs().forEach(w -> scenarios.add(Scenarios.s11(w, options)));
                case "S10" -> options.raw().s10Connections().forEach(n -> scenarios.add(Scenarios.s10(n, options)));
                default -> scenarios.add(Scenarios.s3(options.windowsMs().get(0), options));
            }
        }
        return scenarios;
    }

    /**
     * @param options the run's options
     * @return the offset-commit scenarios (S6, S7: {@link CommitBench}), one per W, in the order given
     */
    static List<CommitScenario> commitScenarios(BenchOptions options) {
        List<CommitScenario> commitScenarios = new ArrayList<>();
        for (String s : options.scenarios()) {
            if (s.equals("S6") || s.equals("S7")) {
                for (int w : options.windowsMs()) {
                    commitScenarios.add(CommitScenario.of(s, w, options));
                }
            }
        }
        return commitScenarios;
    }
}
