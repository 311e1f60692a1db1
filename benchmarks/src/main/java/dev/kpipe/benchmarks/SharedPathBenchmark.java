// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.benchmarks;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.backpressure.Ticker;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.classify.TopicPolicy;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pipeline.WakeupTimer;
import dev.kpipe.spi.Admission;
import java.net.InetAddress;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scenario S4, shared: the per-request path of {@link RequestPathBenchmark} run by four threads at once, each a
 * network thread of its own processor with one pipelined connection, sharing one coordinator (its connection table)
 * and one broker-wide byte budget, as the network threads of a broker do. Compare its ns/op with the single-threaded
 * {@code RequestPathBenchmark.pipelinedProduce}: the difference is what the shared state costs under contention.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar SharedPathBenchmark -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(4)
public class SharedPathBenchmark {

    /** What the network threads share: the coordinator, its budget, the classification policy. */
    @State(Scope.Benchmark)
    public static class Shared {
        PipelineCoordinator<Object, Object> coordinator;
        ProduceRequest body;
        final AtomicInteger threads = new AtomicInteger();

        @Setup
        public void setup() {
            RequestClassifier classifier = new RequestClassifier(new TopicPolicy(Pattern.compile(".*"), null));
            coordinator = new PipelineCoordinator<>(
                    classifier,
                    new InflightLimits(16, 64L << 20),
                    new ByteBudget(100L << 20, 90L << 20, Ticker.SYSTEM),
                    new PipelineStats(),
                    Ticker.SYSTEM,
                    WakeupTimer.daemon());
            body = RequestPathBenchmark.produceRequest((short) 12);
        }
    }

    /** One network thread: its processor and its connection. */
    @State(Scope.Thread)
    public static class NetworkThread {
        RequestPathBenchmark.BenchProcessor processor;
        RequestContext context;
        String connection;
        Object request;
        RequestPathBenchmark.BenchResponse response;

        @Setup
        public void setup(Shared shared) throws Exception {
            int index = shared.threads.getAndIncrement();
            connection = "127.0.0.1:9092-127.0.0.1:" + (50000 + index) + "-" + index;
            RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, (short) 12, "bench", 1);
            context = new RequestContext(
                    header,
                    connection,
                    InetAddress.getLoopbackAddress(),
                    Optional.of(50000 + index),
                    KafkaPrincipal.ANONYMOUS,
                    ListenerName.normalised("PLAINTEXT"),
                    SecurityProtocol.PLAINTEXT,
                    ClientInformation.EMPTY,
                    false,
                    Optional.empty());
            processor = new RequestPathBenchmark.BenchProcessor();
            processor.context = context;
            request = new Object();
            response = new RequestPathBenchmark.BenchResponse(request, context);
            step(shared.coordinator, shared.body, this); // upgrade: steady state is a pipelined connection
        }
    }

    /** @return the response handed to the broker */
    @Benchmark
    public Object pipelinedProduceShared(Shared shared, NetworkThread t) {
        return step(shared.coordinator, shared.body, t);
    }

    private static Object step(PipelineCoordinator<Object, Object> coordinator, ProduceRequest body, NetworkThread t) {
        Admission a = coordinator.onRequestRead(t.processor, t.request, t.context, body, 1100);
        if (a != Admission.PIPELINED) {
            throw new IllegalStateException("not pipelined: " + a);
        }
        coordinator.onRequestDispatched(t.request, t.context);
        coordinator.onProcessorRound(t.processor);
        Object out = coordinator.onResponseReady(t.processor, t.response);
        if (out != t.response) {
            throw new IllegalStateException("response not delivered in order");
        }
        coordinator.onResponseWritten(t.processor, t.response);
        coordinator.onProcessorRound(t.processor);
        return out;
    }
}
