// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.benchmarks;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.plugin.ConnectionDump;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * "S3 at scale" without a broker: what a processor round ({@code PipelineCoordinator.onProcessorRound}) costs with
 * {@code idle} idle pipelined connections on the processor, and what the connection dump costs. A round must cost in
 * proportion to the connections with events, not to all of them: {@link #eventRounds} should not move with
 * {@code idle}.
 *
 * <ul>
 *   <li>{@link #eventRounds}: {@code active} connections each send one produce request, answered and written, in two
 *       rounds (what the network thread spends in kpipe for them, rounds included); per operation.
 *   <li>{@link #emptyRound}: one round with no event at all.
 *   <li>{@link #emptyRoundBudgetWaiting}: one round with no event while someone waits for the byte budget, the
 *       clock frozen so that no idle reservation is revoked: the scan of the reservation holders
 *       ({@code Reservations.revokeIdle}) that such a round does at most.
 *   <li>{@link #connectionDump}: the dump's text ({@code kafka.server:type=kpipe-connections}), at most 100 lines.
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar RoundScaleBenchmark -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RoundScaleBenchmark {

    /** One processor with idle connections and a few active ones, on the system clock. */
    @State(Scope.Thread)
    public static class Processor {
        @Param({"0", "1000", "5000"})
        int idle;

        @Param({"1", "10"})
        int active;

        ScaleFixture fixture;

        @Setup(Level.Trial)
        public void setup() throws Exception {
            fixture = new ScaleFixture(false, 100L << 20);
            fixture.add(idle, 1, fixture.idle);
            fixture.add(active, 1, fixture.active);
        }
    }

    /** One processor with idle connections only, on a frozen clock, someone waiting for the budget or not. */
    @State(Scope.Thread)
    public static class IdleProcessor {
        @Param({"0", "1000", "5000"})
        int idle;

        ScaleFixture fixture;
        ScaleFixture waiting;
        private final ByteBudget.Waiter waiter = () -> {};

        @Setup(Level.Trial)
        public void setup() throws Exception {
            fixture = new ScaleFixture(true, 100L << 20);
            fixture.add(idle, 1, fixture.idle);
            waiting = new ScaleFixture(true, 100L << 20);
            waiting.add(idle, 1, waiting.idle);
            // asks for more than is left (one byte is charged, so the budget is not empty even without idle
            // connections): queued in the budget's FIFO for the whole trial
            if (!waiting.budget.tryAdmitRead(1)
                    || waiting.budget.tryReserve(waiter, 100L << 20) > 0
                    || waiting.budget.waiting() != 1) {
                throw new IllegalStateException("the waiter was not queued");
            }
            // the clock stays frozen: every reservation is younger than the 20 ms that would revoke it, so every round
            // looks at every holder and revokes none (the rounds of the first 20 ms of a wait)
        }

        @TearDown(Level.Trial)
        public void check() {
            if (waiting.budget.waiting() != 1) {
                throw new IllegalStateException("the waiter left the queue");
            }
        }
    }

    /** @return responses handed to the broker */
    @Benchmark
    public int eventRounds(Processor p) {
        return p.fixture.events(p.fixture.active);
    }

    /** One round with no event. */
    @Benchmark
    public void emptyRound(IdleProcessor p) {
        p.fixture.coordinator.onProcessorRound(p.fixture.processor);
    }

    /** One round with no event while someone waits for the budget. */
    @Benchmark
    public void emptyRoundBudgetWaiting(IdleProcessor p) {
        p.waiting.coordinator.onProcessorRound(p.waiting.processor);
    }

    /** @return the connection dump's text */
    @Benchmark
    public String connectionDump(IdleProcessor p) {
        return ConnectionDump.of(p.fixture.coordinator);
    }
}
