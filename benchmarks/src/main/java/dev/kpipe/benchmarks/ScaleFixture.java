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
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * Scenario "S3 at scale" without a broker: one network processor with many pipelined connections, as the broker's
 * threads report them to the plugin. Every connection was upgraded by a produce request and is now idle (its response
 * written, unmuted, holding a reservation of the byte budget for its next read), as a producer between sends is; a few
 * of them are then driven through requests ({@link #events}). Used by {@link RoundScaleBenchmark} and
 * {@link HeapPerConnection}. Not thread-safe: one thread plays the network thread and the handlers.
 */
final class ScaleFixture {

    /** A request handle: the benchmark's stand-in for Kafka's {@code RequestChannel.Request}. */
    record BenchRequest(RequestContext context) {}

    /** A time source the benchmark sets; frozen unless moved. */
    static final class ManualTicker implements Ticker {
        long nanos = 1_000_000_000L;

        @Override
        public long nanos() {
            return nanos;
        }
    }

    /**
     * The request-path benchmarks' processor ({@link RequestPathBenchmark.BenchProcessor}), except that each request
     * carries its own context (one per connection).
     */
    static final class ScaleProcessor extends RequestPathBenchmark.BenchProcessor {
        @Override
        public RequestContext contextOf(Object request) {
            return ((BenchRequest) request).context();
        }
    }

    /**
     * One connection: what Kafka keeps for it anyway (its id, address, client information) and one request and its
     * response handle, reused for each request the benchmark sends on it.
     */
    static final class Conn {
        final String id;
        final InetAddress address;
        final ClientInformation client;
        final BenchRequest request;
        final RequestPathBenchmark.BenchResponse response;

        Conn(int index) throws UnknownHostException {
            int port = 10_000 + index;
            id = "127.0.0.1:9092-127.0.0.1:" + port + "-" + index;
            address = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
            client = new ClientInformation("apache-kafka-java", "4.1.1");
            RequestContext context = new RequestContext(
                    new RequestHeader(ApiKeys.PRODUCE, (short) 12, "producer-" + index, 1),
                    id,
                    address,
                    Optional.of(port),
                    KafkaPrincipal.ANONYMOUS,
                    LISTENER,
                    SecurityProtocol.PLAINTEXT,
                    client,
                    false,
                    Optional.empty());
            request = new BenchRequest(context);
            response = new RequestPathBenchmark.BenchResponse(request, context);
        }
    }

    private static final ListenerName LISTENER = ListenerName.normalised("PLAINTEXT");
    /** A produce request's size on the wire, bytes (1 KiB record plus headers). */
    static final int REQUEST_BYTES = 1100;

    final ManualTicker manualTicker = new ManualTicker();
    final ByteBudget budget;
    final PipelineCoordinator<Object, Object> coordinator;
    final ScaleProcessor processor = new ScaleProcessor();
    final ProduceRequest body = RequestPathBenchmark.produceRequest((short) 12);
    final List<Conn> idle = new ArrayList<>();
    final List<Conn> active = new ArrayList<>();
    private int next;

    /**
     * @param manualClock whether the coordinator's clock is {@link #manualTicker} (frozen unless moved) rather than the
     *     system's
     * @param budgetBytes {@code kpipe.max.inflight.bytes}
     */
    ScaleFixture(boolean manualClock, long budgetBytes) {
        Ticker ticker = manualClock ? manualTicker : Ticker.SYSTEM;
        budget = new ByteBudget(budgetBytes, budgetBytes * 9 / 10, ticker);
        coordinator = new PipelineCoordinator<>(
                new RequestClassifier(new TopicPolicy(Pattern.compile(".*"), null)),
                new InflightLimits(16, 64L << 20),
                budget,
                new PipelineStats(),
                ticker,
                WakeupTimer.daemon());
    }

    /**
     * Adds connections upgraded by {@code depth} pipelined produce requests, all answered and written: idle now.
     *
     * @param count how many
     * @param depth requests in flight at once before they were answered (the connection's peak, so its slots)
     * @param into where to list them
     * @return the connections added
     */
    List<Conn> add(int count, int depth, List<Conn> into) throws UnknownHostException {
        List<Conn> added = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Conn c = new Conn(next++);
            for (int d = 0; d < depth; d++) {
                read(c);
                coordinator.onRequestDispatched(c.request, c.request.context());
                coordinator.onProcessorRound(processor);
            }
            for (int d = 0; d < depth; d++) {
                respond(c);
            }
            coordinator.onProcessorRound(processor);
            added.add(c);
        }
        into.addAll(added);
        return added;
    }

    /**
     * Drives each of the given connections through one produce request in two processor rounds, as a network thread
     * sees it when those connections have events: read and dispatched, round (unmute after the dispatch), response
     * dequeued in order and written, round (re-evaluated, reservation taken for the next read).
     *
     * @param conns the connections with events
     * @return the number of responses handed to the broker
     */
    int events(List<Conn> conns) {
        for (int i = 0; i < conns.size(); i++) {
            Conn c = conns.get(i);
            read(c);
            coordinator.onRequestDispatched(c.request, c.request.context());
        }
        coordinator.onProcessorRound(processor);
        for (int i = 0; i < conns.size(); i++) {
            respond(conns.get(i));
        }
        coordinator.onProcessorRound(processor);
        return conns.size();
    }

    private void read(Conn c) {
        Admission a = coordinator.onRequestRead(processor, c.request, c.request.context(), body, REQUEST_BYTES);
        if (a != Admission.PIPELINED) {
            throw new IllegalStateException("not pipelined: " + a + " on " + c.id);
        }
    }

    private void respond(Conn c) {
        if (coordinator.onResponseReady(processor, c.response) != c.response) {
            throw new IllegalStateException("response not delivered in order on " + c.id);
        }
        coordinator.onResponseWritten(processor, c.response);
    }
}
