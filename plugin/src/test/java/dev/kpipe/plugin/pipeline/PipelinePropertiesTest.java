// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.plugin.pipeline.FakeBroker.Step;
import dev.kpipe.plugin.pipeline.FakeBroker.StepType;
import dev.kpipe.plugin.pipeline.Scenario.Client;
import dev.kpipe.plugin.pipeline.Scenario.Kind;
import dev.kpipe.plugin.pipeline.Scenario.Req;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * Random scenarios (several connections and processors, drains, acks=0, throttle windows, SASL
 * re-authentications, disconnections, small in-flight limits) run under a random interleaving, then to quiescence with a
 * fair scheduler: every step keeps the {@link FakeBroker} invariants, every client still connected
 * gets every response in order (no wedge), and once every client has gone kpipe's gauges are 0.
 * The interleaving is a list of choices, so jqwik shrinks a failure to a short one.
 */
class PipelinePropertiesTest {

    private static final int FAIR_STEPS = 200_000;
    /** A choice at or above this picks a client disconnection, when one is possible. */
    private static final int DISCONNECT_CHOICE = 995;

    @Property(seed = "1405", tries = 2500, edgeCases = EdgeCasesMode.NONE)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void anyInterleavingOfAnyScenarioKeepsTheInvariantsAndAnswersEveryone(
            @ForAll("scenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        FakeBroker broker = run(scenario, choices);
        cover(broker, "drain", 10);
        cover(broker, "downgrade without drain", 5);
        cover(broker, "acks=0 on a pipelined connection", 10);
        cover(broker, "close with parked responses", 1);
        cover(broker, "in-flight limit reached", 10);
        cover(broker, "re-authentication deferred", 3);
    }

    @Property(seed = "1406", tries = 1500, edgeCases = EdgeCasesMode.NONE)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void drainsThrottlesAndDisconnectionsUnderATightInflightLimit(
            @ForAll("hostileScenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        FakeBroker broker = run(scenario, choices);
        cover(broker, "drain", 20);
        cover(broker, "throttle starts while draining", 1);
        cover(broker, "drained but throttled", 1);
        cover(broker, "close with a held request", 1);
        // rare here (about 3 in 1,500 tries, so a coverage bound would fail on some seeds); every interleaving of it
        // is explored in PipelineExhaustiveTest (a disconnecting client with a held re-authentication)
        Statistics.label("close with a held re-authentication")
                .collect(broker.coverage.containsKey("close with a held re-authentication"));
        cover(broker, "close with parked responses", 1);
        cover(broker, "close while throttled", 1);
        cover(broker, "close-connection response", 1);
        cover(broker, "in-flight limit reached", 20);
    }

    /**
     * The same, with a broker-wide byte budget of a few requests (random capacity; request sizes vary, some larger
     * than the whole budget), storage pressure saturating and clearing at random points (a flag, or the plugin's
     * BrokerQueuePressure over the fake's request queue and purgatory), admitted() callbacks that may run late,
     * and disconnections: the budget's accounting holds on every step, grants are FIFO, no pipelined connection is
     * unmuted while saturated, no wedge once the pressure clears (but the known idle-reservation starvation, which is
     * counted), and the budget is empty once every client has gone.
     */
    @Property(seed = "1407", tries = 700, edgeCases = EdgeCasesMode.NONE)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void budgetAndStoragePressureUnderAnyInterleaving(
            @ForAll("budgetScenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        FakeBroker broker = run(scenario, choices);
        cover(broker, "budget wait", 30);
        cover(broker, "budget grant", 30);
        cover(broker, "two budget waiters", 6);
        cover(broker, "upgrade deferred: no budget room", 10);
        cover(broker, "oversize read", 12);
        cover(broker, "read above its reservation", 10);
        cover(broker, "pressure-blocked", 20);
        cover(broker, "admission callback delayed", 10);
        cover(broker, "close while waiting for budget", 12);
        cover(broker, "close while granted, grant not consumed", 8);
        cover(broker, "close before the admitted() callback ran", 3);
        cover(broker, "close with a reservation", 30);
        cover(broker, "drain", 2); // about 6 % (42 of 700): 4 % sat 2 standard deviations below, failing 1 run in ~70
        Statistics.label("issue bound exceeded").collect(broker.coverage.containsKey("issue bound exceeded"));
        Statistics.label("idle-reservation starvation")
                .collect(broker.coverage.containsKey("idle-reservation starvation"));
    }

    /**
     * {@code kpipe.enable} flipped off and on again at random points (Kafka's dynamic broker config), over the
     * scenarios above (drains, acks=0, throttle windows, disconnections, tight limits, a byte budget and storage
     * pressure): the invariants hold on every step, and in every quiescent state while disabled kpipe owns no
     * connection (every pipelined connection drained back to classic, every response written in order).
     */
    @Property(seed = "1408", tries = 700, edgeCases = EdgeCasesMode.NONE)
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF)
    void kpipeEnableFlippedAtAnyPointUnderAnyInterleaving(
            @ForAll("flippingScenarios") Scenario scenario, @ForAll("choices") List<Integer> choices) {
        FakeBroker broker = run(scenario, choices);
        cover(broker, "disabled", 90);
        cover(broker, "disabled with pipelined connections", 40);
        cover(broker, "drain after disable", 25);
        cover(broker, "read after disable, before the drain", 0.5);
    }

    /** The situation must occur in at least {@code percent} % of the tries (else the generators are off). */
    private static void cover(FakeBroker broker, String situation, double percent) {
        Statistics.label(situation).collect(broker.coverage.containsKey(situation));
        Statistics.label(situation).coverage(c -> c.check(true).percentage(p -> p >= percent));
    }

    @Provide
    Arbitrary<List<Integer>> choices() {
        return Arbitraries.integers()
                .between(0, 999)
                .list()
                .ofMaxSize(2000)
                .withSizeDistribution(RandomDistribution.uniform());
    }

    /**
     * Runs the choices, then to quiescence, then closes every client. A choice picks among the
     * enabled steps by weight: throttle windows last a while (their end is picked rarely), and a
     * client disconnects rarely, but more often while kpipe parks something of its connection.
     */
    static FakeBroker run(Scenario scenario, List<Integer> choices) {
        FakeBroker broker = new FakeBroker(scenario);
        for (int choice : choices) {
            List<Step> steps = broker.enabled(true);
            if (steps.isEmpty()) {
                break;
            }
            broker.apply(pick(broker, steps, choice));
        }
        broker.runFair(FAIR_STEPS);
        broker.checkAllAnswered();
        broker.finishAndCheckGaugesZero(FAIR_STEPS);
        return broker;
    }

    private static Step pick(FakeBroker broker, List<Step> steps, int choice) {
        List<Step> disconnects = new ArrayList<>();
        List<Step> interesting = new ArrayList<>();
        List<Step> others = new ArrayList<>();
        for (Step s : steps) {
            if (s.type() == StepType.DISCONNECT) {
                disconnects.add(s);
                ConnectionPipeline cp = broker.owned(s.arg());
                if (cp != null
                        && (cp.held() != null
                                || cp.inflight().size() > 1
                                || Internals.reservation(cp).waiting())) {
                    interesting.add(s);
                }
            } else {
                others.add(s);
            }
        }
        if (!interesting.isEmpty() && choice >= 900) {
            return interesting.get(choice % interesting.size());
        }
        if (others.isEmpty() || (!disconnects.isEmpty() && choice >= DISCONNECT_CHOICE)) {
            return disconnects.get(choice % disconnects.size());
        }
        double total = 0;
        for (Step s : others) {
            total += weight(s.type());
        }
        double at = total * choice / 1000.0;
        for (Step s : others) {
            at -= weight(s.type());
            if (at < 0) {
                return s;
            }
        }
        return others.get(others.size() - 1);
    }

    private static double weight(StepType type) {
        return switch (type) {
            case NET -> 3;
            case END_THROTTLE -> 0.2;
            case COMPLETE -> 1;
            case PRESSURE -> 0.3;
            case ADMIT -> 1;
            case TIMEOUT -> 1;
            case CONFIG -> 0.3;
            default -> 2;
        };
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        return scenarios(requests(1), Arbitraries.of(1, 2, 3, 16), 8);
    }

    @Provide
    Arbitrary<Scenario> hostileScenarios() {
        return scenarios(requests(3), Arbitraries.of(2, 2, 3), 7);
    }

    @Provide
    Arbitrary<Scenario> flippingScenarios() {
        return Combinators.combine(
                        Arbitraries.oneOf(scenarios(), hostileScenarios(), budgetScenarios()),
                        Arbitraries.integers().between(1, 4))
                .as(Scenario::withEnableFlips);
    }

    @Provide
    Arbitrary<Scenario> budgetScenarios() {
        Arbitrary<Integer> capacity = Arbitraries.integers().between(3, 24);
        // sizes 1..12, and one in ten well beyond any capacity
        Arbitrary<Req> requests = Combinators.combine(
                        requests(2),
                        Arbitraries.integers().between(1, 12),
                        Arbitraries.integers().between(0, 9))
                .as((r, size, big) -> r.sized(big == 0 ? 20 + 2 * size : size));
        Arbitrary<Scenario.BackPressure> backPressure = Combinators.combine(
                        capacity,
                        Arbitraries.integers().between(0, 3),
                        Arbitraries.of(true, false),
                        Arbitraries.frequencyOf(
                                net.jqwik.api.Tuple.of(3, Arbitraries.just(0)),
                                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, 4))),
                        Arbitraries.integers().between(0, 2))
                .as((cap, windows, delayed, queue, purgatory) ->
                        new Scenario.BackPressure(cap, windows, delayed, queue, purgatory, true));
        return Combinators.combine(scenarios(requests, Arbitraries.of(1, 2, 3, 16), 6), backPressure)
                .as(Scenario::with);
    }

    private static Arbitrary<Scenario> scenarios(
            Arbitrary<Req> requests, Arbitrary<Integer> maxInflight, int maxRequests) {
        Arbitrary<Client> client = Combinators.combine(
                        requests.list().ofMinSize(1).ofMaxSize(maxRequests),
                        Arbitraries.frequencyOf(
                                net.jqwik.api.Tuple.of(3, Arbitraries.just(Integer.MAX_VALUE)),
                                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, 3))),
                        Arbitraries.of(true, false, false))
                .as(Client::new);
        return Combinators.combine(
                        Arbitraries.integers().between(1, 2),
                        Arbitraries.integers().between(1, 4),
                        maxInflight,
                        Arbitraries.frequencyOf(
                                net.jqwik.api.Tuple.of(4, Arbitraries.just(Long.MAX_VALUE)),
                                net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(1, 500))),
                        Arbitraries.of(true, false),
                        client.list().ofMinSize(1).ofMaxSize(4),
                        Arbitraries.longs())
                .as(Scenario::new);
    }

    /** @param hostility 1 for a realistic mix; higher for more exclusive requests and throttle windows */
    private static Arbitrary<Req> requests(int hostility) {
        Arbitrary<Kind> kinds = Arbitraries.frequency(
                net.jqwik.api.Tuple.of(4, Kind.PRODUCE_ACKS_ALL),
                net.jqwik.api.Tuple.of(4, Kind.PRODUCE_ACKS_1),
                net.jqwik.api.Tuple.of(3, Kind.PRODUCE_ACKS_0),
                net.jqwik.api.Tuple.of(hostility, Kind.PRODUCE_EXCLUDED),
                net.jqwik.api.Tuple.of(hostility, Kind.PRODUCE_TRANSACTIONAL),
                net.jqwik.api.Tuple.of(2, Kind.METADATA),
                net.jqwik.api.Tuple.of(1, Kind.API_VERSIONS),
                net.jqwik.api.Tuple.of(2 * hostility, Kind.FETCH),
                net.jqwik.api.Tuple.of(1, Kind.SASL_REAUTH));
        Arbitrary<Integer> percent = Arbitraries.integers().between(0, 99);
        return Combinators.combine(kinds, percent, percent, percent, percent)
                .as((kind, later, throttle, close, byId) -> {
                    boolean canWait =
                            kind == Kind.PRODUCE_ACKS_ALL || kind == Kind.FETCH || kind == Kind.PRODUCE_TRANSACTIONAL;
                    boolean produce = kind.name().startsWith("PRODUCE");
                    return new Req(
                            kind,
                            canWait && later < 60,
                            kind != Kind.SASL_REAUTH && throttle < 12 * hostility,
                            kind == Kind.PRODUCE_ACKS_0 && close < 8,
                            produce && byId < 30);
                });
    }
}
