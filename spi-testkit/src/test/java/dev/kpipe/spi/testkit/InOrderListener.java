// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import dev.kpipe.spi.Admission;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.NetworkProcessor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * A small pipelining listener that keeps the plugin side of the contract: a connection reads its next request once the
 * previous one is dispatched (the news goes from the request handler thread to the network thread with a wake-up),
 * responses are handed on in the order of the requests, METADATA requests are held for one round and then released,
 * and the responses held for a connection that closed are discarded.
 */
final class InOrderListener implements NetworkEventListener<FakeRequest, FakeResponse> {

    /** Connections whose request was dispatched: written by request handler threads, read by the network thread. */
    private final Queue<String> dispatched = new ConcurrentLinkedQueue<>();
    /** Network thread only, below. Per connection, its requests not yet answered, in arrival order. */
    private final Map<String, ArrayDeque<FakeRequest>> unanswered = new HashMap<>();

    private final Map<FakeRequest, FakeResponse> ready = new IdentityHashMap<>();
    private final List<FakeRequest> held = new ArrayList<>();
    private volatile NetworkProcessor<FakeRequest, FakeResponse> processor;

    @Override
    public Admission onRequestRead(
            NetworkProcessor<FakeRequest, FakeResponse> p,
            FakeRequest request,
            RequestContext context,
            AbstractRequest body,
            int sizeInBytes) {
        processor = p;
        unanswered
                .computeIfAbsent(context.connectionId, id -> new ArrayDeque<>())
                .add(request);
        if (context.header.apiKey() == ApiKeys.METADATA) {
            held.add(request);
            return Admission.HELD;
        }
        return Admission.PIPELINED;
    }

    @Override
    public void onRequestDispatched(FakeRequest request, RequestContext context) {
        dispatched.add(context.connectionId);
        processor.wakeup();
    }

    @Override
    public void onProcessorRound(NetworkProcessor<FakeRequest, FakeResponse> p) {
        for (String id = dispatched.poll(); id != null; id = dispatched.poll()) {
            p.unmute(id);
        }
        held.forEach(p::release);
        held.clear();
    }

    @Override
    public FakeResponse onResponseReady(NetworkProcessor<FakeRequest, FakeResponse> p, FakeResponse response) {
        if (response != null) {
            FakeRequest request = p.requestOf(response);
            if (!unanswered.containsKey(request.connectionId())) {
                return response; // its connection closed: the broker completes it
            }
            ready.put(request, response);
        }
        for (ArrayDeque<FakeRequest> requests : unanswered.values()) {
            FakeResponse next = requests.isEmpty() ? null : ready.remove(requests.peekFirst());
            if (next != null) {
                requests.removeFirst();
                return next;
            }
        }
        return null;
    }

    @Override
    public void onConnectionClosed(NetworkProcessor<FakeRequest, FakeResponse> p, String connectionId) {
        held.removeIf(q -> q.connectionId().equals(connectionId) && release(p, q));
        ArrayDeque<FakeRequest> requests = unanswered.remove(connectionId);
        if (requests != null) {
            for (FakeRequest q : requests) {
                FakeResponse r = ready.remove(q);
                if (r != null) {
                    p.discard(r);
                }
            }
        }
    }

    private static boolean release(NetworkProcessor<FakeRequest, FakeResponse> p, FakeRequest q) {
        p.release(q); // a held request of a closed connection is released as the listener learns of the close
        return true;
    }
}
