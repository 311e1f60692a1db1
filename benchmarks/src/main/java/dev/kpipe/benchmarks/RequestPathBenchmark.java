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
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import dev.kpipe.spi.ResponseKind;
import java.net.InetAddress;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scenario S4: the plugin's per-request path with no broker, measured with JMH. One iteration is
 * one produce request's whole life on a pipelined connection, as the broker's threads report it:
 * classify and admit (network thread), dispatched (handler thread, here the same thread), the
 * processor round that unmutes, the response dequeued in order, the send completed and its mute
 * events consumed, and the round that re-evaluates the connection; with the global byte budget on.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar -prof gc} (ns/op, and
 * {@code gc.alloc.rate.norm} in bytes/op).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RequestPathBenchmark {

    private static final String CONNECTION = "127.0.0.1:9092-127.0.0.1:50000-0";

    private PipelineCoordinator<Object, Object> coordinator;
    private RequestClassifier classifier;
    private BenchProcessor processor;
    private RequestContext context;
    private ProduceRequest body;
    private Object request;
    private BenchResponse response;

    /** A response handle: the benchmark's stand-in for Kafka's {@code SendResponse}. */
    record BenchResponse(Object request, RequestContext context) {}

    /** The least a network processor must do for the plugin: nothing but answer accessors. */
    static class BenchProcessor implements NetworkProcessor<Object, Object> {
        long unmutes;

        @Override
        public String listenerName() {
            return "PLAINTEXT";
        }

        @Override
        public int id() {
            return 0;
        }

        @Override
        public void mute(String connectionId) {}

        @Override
        public void unmute(String connectionId) {
            unmutes++;
        }

        @Override
        public boolean isOpen(String connectionId) {
            return true;
        }

        @Override
        public void release(Object request) {}

        @Override
        public void handBack(String connectionId, Object heldRequest) {}

        @Override
        public void beginReauthentication(String connectionId, Reauthentication reauthentication) {}

        @Override
        public Object pollResponse() {
            return null;
        }

        @Override
        public void close(String connectionId) {}

        @Override
        public void discard(Object response) {}

        @Override
        public void wakeup() {}

        @Override
        public ResponseKind kindOf(Object response) {
            return ResponseKind.SEND;
        }

        @Override
        public Object requestOf(Object response) {
            return ((BenchResponse) response).request();
        }

        @Override
        public RequestContext contextOf(Object request) {
            return context;
        }

        RequestContext context;
    }

    @Setup
    public void setup() throws Exception {
        classifier = new RequestClassifier(new TopicPolicy(Pattern.compile(".*"), null));
        coordinator = new PipelineCoordinator<>(
                classifier,
                new InflightLimits(16, 64L << 20),
                new ByteBudget(100L << 20, 90L << 20, Ticker.SYSTEM),
                new PipelineStats(),
                Ticker.SYSTEM,
                WakeupTimer.daemon());
        processor = new BenchProcessor();
        short version = 12;
        body = produceRequest(version);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, version, "bench", 1);
        context = new RequestContext(
                header,
                CONNECTION,
                InetAddress.getLoopbackAddress(),
                Optional.of(50000),
                KafkaPrincipal.ANONYMOUS,
                ListenerName.normalised("PLAINTEXT"),
                SecurityProtocol.PLAINTEXT,
                ClientInformation.EMPTY,
                false,
                Optional.empty());
        processor.context = context;
        request = new Object();
        response = new BenchResponse(request, context);
        // Upgrade the connection once: steady state is a pipelined connection.
        step();
    }

    /** @return the response handed to the broker (consumed so the JIT keeps the path) */
    @Benchmark
    public Object pipelinedProduce() {
        return step();
    }

    /** Classification alone (network thread): a non-transactional produce to a cached topic. */
    @Benchmark
    public Object classifyProduce() {
        return classifier.classify(ApiKeys.PRODUCE, body);
    }

    private Object step() {
        Admission a = coordinator.onRequestRead(processor, request, context, body, 1100);
        if (a != Admission.PIPELINED) {
            throw new IllegalStateException("not pipelined: " + a);
        }
        coordinator.onRequestDispatched(request, context);
        coordinator.onProcessorRound(processor);
        Object out = coordinator.onResponseReady(processor, response);
        if (out != response) {
            throw new IllegalStateException("response not delivered in order");
        }
        coordinator.onResponseWritten(processor, response);
        coordinator.onProcessorRound(processor);
        return out;
    }

    /**
     * @param version the produce request version
     * @return an acks=all produce request of one 1 KiB record to partition 0 of topic {@code bench}
     */
    static ProduceRequest produceRequest(short version) {
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData()
                .setName("bench")
                .setPartitionData(java.util.List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(0)
                        .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[1024]))))));
        return new ProduceRequest.Builder(
                        version,
                        version,
                        new ProduceRequestData()
                                .setAcks((short) -1)
                                .setTimeoutMs(30_000)
                                .setTopicData(topics))
                .build(version);
    }
}
