// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.plugin.pipeline.FakeBroker.Step;
import java.util.HashSet;
import java.util.List;

/**
 * Exhaustive exploration of every interleaving of a {@link Scenario}: depth-first over the steps
 * {@link FakeBroker#enabled} offers, memoizing visited states by a 64-bit hash of
 * {@link FakeBroker#fingerprint()} (states are rebuilt by replay: kpipe's state cannot be copied).
 * Every state is checked by {@link FakeBroker#checkInvariants()}; every quiescent state by
 * {@link FakeBroker#checkAllAnswered()} (no wedge), and, once every client that may disconnect has,
 * by {@link FakeBroker#finishAndCheckGaugesZero}.
 */
final class Explorer {

    /**
     * @param covered every situation {@link FakeBroker#note} recorded on any explored path
     */
    record Result(long states, long edges, long quiescent, java.util.Set<String> covered) {}

    private final Scenario scenario;
    private final boolean allowDisconnect;
    private final long maxStates;
    private final HashSet<Long> visited = new HashSet<>();
    private final Step[] path = new Step[100_000];
    private int depth;
    private long edges;
    private long quiescent;
    private final java.util.Set<String> covered = new java.util.TreeSet<>();

    private Explorer(Scenario scenario, boolean allowDisconnect, long maxStates) {
        this.scenario = scenario;
        this.allowDisconnect = allowDisconnect;
        this.maxStates = maxStates;
    }

    /**
     * @param scenario the scenario
     * @param maxStates fail beyond this many distinct states (keeps the test bounded)
     * @return what was explored
     */
    static Result explore(Scenario scenario, long maxStates) {
        Explorer e =
                new Explorer(scenario, scenario.clients.stream().anyMatch(Scenario.Client::mayDisconnect), maxStates);
        e.dfs(new FakeBroker(scenario));
        return new Result(e.visited.size(), e.edges, e.quiescent, e.covered);
    }

    private void dfs(FakeBroker b) {
        if (!visited.add(hash(b.fingerprint()))) {
            return;
        }
        if (visited.size() > maxStates) {
            throw new AssertionError("more than " + maxStates + " states: " + scenario);
        }
        List<Step> steps = b.enabled(allowDisconnect);
        covered.addAll(b.coverage.keySet());
        if (b.quiescent()) {
            quiescent++;
            b.checkAllAnswered();
            if (steps.isEmpty()) {
                b.finishAndCheckGaugesZero(10_000);
                return;
            }
        }
        for (int i = 0; i < steps.size(); i++) {
            FakeBroker child = i == 0 ? b : FakeBroker.replay(scenario, path, depth);
            path[depth++] = steps.get(i);
            edges++;
            child.apply(steps.get(i));
            dfs(child);
            depth--;
        }
    }

    /** FNV-1a, 64 bits. */
    private static long hash(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        return h;
    }
}
