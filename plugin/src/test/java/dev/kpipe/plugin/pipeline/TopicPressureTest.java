// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.extension.StoragePressure;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.testkit.KafkaRequests;
import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkProcessor;
import dev.kpipe.spi.Reauthentication;
import dev.kpipe.spi.ResponseKind;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.requests.RequestContext;
import org.junit.jupiter.api.Test;

/**
 * Storage pressure per topic ({@code kpipe.storage.pressure.class} reporting one topic saturated): only the
 * connections whose last produce named that topic wait, and the source's "cleared" call wakes their processor so that
 * they read at its next round instead of whenever it happens to run.
 */
class TopicPressureTest {

    /** A source with a set of saturated topics that calls its listener when one clears. */
    static final class TopicSource implements StoragePressure {
        final Set<String> saturated = ConcurrentHashMap.newKeySet();
        Runnable listener;

        @Override
        public boolean anyTopicSaturated() {
            return !saturated.isEmpty();
        }

        @Override
        public boolean saturated(String topic) {
            return saturated.contains(topic);
        }

        @Override
        public void onCleared(Runnable l) {
            listener = l;
        }

        void clear(String topic) {
            saturated.remove(topic);
            listener.run();
        }
    }

    /** A processor that keeps which connections are muted and counts wake-ups. */
    static final class Processor implements NetworkProcessor<Object, Object> {
        final Set<String> muted = new HashSet<>();
        int wakeups;

        @Override
        public String listenerName() {
            return "PLAINTEXT";
        }

        @Override
        public int id() {
            return 0;
        }

        @Override
        public void mute(String connectionId) {
            muted.add(connectionId);
        }

        @Override
        public void unmute(String connectionId) {
            muted.remove(connectionId);
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
        public void close(String connectionId) {}

        @Override
        public Object pollResponse() {
            return null;
        }

        @Override
        public void discard(Object response) {}

        @Override
        public void wakeup() {
            wakeups++;
        }

        @Override
        public ResponseKind kindOf(Object response) {
            return ResponseKind.SEND;
        }

        @Override
        public Object requestOf(Object response) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RequestContext contextOf(Object request) {
            throw new UnsupportedOperationException();
        }
    }

    private final long[] now = {0};
    private final TopicSource source = new TopicSource();
    private final Processor processor = new Processor();
    private final PipelineCoordinator<Object, Object> coordinator = new PipelineCoordinator<>(
            new RequestClassifier(KafkaRequests.policy()),
            new InflightLimits(16, 1L << 30),
            ByteBudget.unbounded(() -> now[0]),
            new PipelineStats(),
            () -> now[0],
            (p, d) -> {});

    {
        coordinator.pressure(source);
    }

    /** Reads a produce to {@code topic} on a new connection and dispatches it; returns the connection id. */
    private String produce(String connection, String topic) {
        KafkaRequests.Parsed p = KafkaRequests.produce(connection, 1, (short) -1, null, false, topic);
        Object request = new Object();
        processor.muted.add(connection); // reading a request mutes
        assertEquals(Admission.PIPELINED, coordinator.onRequestRead(processor, request, p.context(), p.body(), 100));
        coordinator.onRequestDispatched(request, p.context());
        return connection;
    }

    @Test
    void onlyConnectionsProducingToASaturatedTopicWaitAndTheClearWakesThem() {
        source.saturated.add(KafkaRequests.INCLUDED);
        String a = produce("conn-a", KafkaRequests.INCLUDED);
        String b = produce("conn-b", KafkaRequests.INCLUDED_2);
        coordinator.onProcessorRound(processor);
        assertTrue(processor.muted.contains(a), "produced to the saturated topic: waits");
        assertFalse(processor.muted.contains(b), "produced to another topic: reads on");
        assertEquals(1, coordinator.stats().waits(WaitReason.STORAGE_PRESSURE));

        coordinator.onProcessorRound(processor);
        assertTrue(processor.muted.contains(a), "still saturated: still waits");
        assertEquals(1, coordinator.stats().waits(WaitReason.STORAGE_PRESSURE), "one wait, however many rounds");

        int wakeups = processor.wakeups;
        source.clear(KafkaRequests.INCLUDED);
        assertEquals(wakeups + 1, processor.wakeups, "the clear woke the processor at once");
        coordinator.onProcessorRound(processor);
        assertFalse(processor.muted.contains(a), "read at the round the wake-up brought");
    }

    @Test
    void withoutAWakeUpTheWaitingConnectionIsEvaluatedAgainAfterTheRecheckPeriod() {
        source.saturated.add(KafkaRequests.INCLUDED);
        source.saturated.add("other-topic"); // keeps some topic saturated: no round sees "nothing saturated"
        String a = produce("conn-a", KafkaRequests.INCLUDED);
        coordinator.onProcessorRound(processor);
        assertTrue(processor.muted.contains(a));
        source.saturated.remove(KafkaRequests.INCLUDED); // cleared without telling kpipe
        coordinator.onProcessorRound(processor);
        assertTrue(processor.muted.contains(a), "not evaluated again before the re-check period");
        now[0] += Rounds.PRESSURE_RECHECK_NANOS;
        coordinator.onProcessorRound(processor);
        assertFalse(processor.muted.contains(a), "evaluated again after it");
    }
}
