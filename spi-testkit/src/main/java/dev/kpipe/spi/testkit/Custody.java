// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The plugin-side checks of a {@link FakeProcessor}: what its listener holds (requests it answered
 * {@code HELD}, responses it kept back), each by identity, and the violations found. Confined to the processor's
 * thread, but for {@link #action} and {@link #violation}, which any thread may call.
 */
final class Custody {

    private final Map<FakeRequest, Boolean> heldRequests = new IdentityHashMap<>();
    private final Set<FakeResponse> heldResponses = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<FakeResponse> settled = Collections.newSetFromMap(new IdentityHashMap<>());
    private final List<String> violations = new ArrayList<>();
    private final Thread processorThread;
    private final Consumer<String> sink;

    /**
     * @param processorThread the processor's thread, the only one its actions may be called on
     * @param sink also told of each violation, on the thread that found it
     */
    Custody(Thread processorThread, Consumer<String> sink) {
        this.processorThread = processorThread;
        this.sink = sink;
    }

    /** @return whether the action may run: on the processor's thread (else a violation is reported); thread: any */
    boolean action(String name) {
        Thread t = Thread.currentThread();
        if (t != processorThread) {
            violation(name + " called on thread '" + t.getName() + "', not the processor's thread '"
                    + processorThread.getName() + "'");
            return false;
        }
        return true;
    }

    /** The listener answered {@code HELD} to the request. */
    void requestHeld(FakeRequest request) {
        heldRequests.put(request, Boolean.TRUE);
    }

    /**
     * The listener gave a held request to the broker ({@code release} or {@code handBack}).
     *
     * @param action the action, for the report
     * @return whether it was held (else a violation is reported)
     */
    boolean requestLetGo(FakeRequest request, String action) {
        if (heldRequests.remove(request) == null) {
            violation(action + " of " + request + ", which the listener does not hold"
                    + " (never answered HELD, or released or handed back already)");
            return false;
        }
        return true;
    }

    /** The listener took the response: kept it back from {@code onResponseReady}, or polled it. */
    void responseTaken(FakeResponse response) {
        heldResponses.add(response);
    }

    /**
     * The listener returned a response from {@code onResponseReady} other than the one it was given, or discarded one.
     *
     * @param action {@code returned} or {@code discarded}, for the report
     * @return whether the listener held it (else a violation is reported)
     */
    boolean responseLetGo(FakeResponse response, String action) {
        if (!heldResponses.remove(response)) {
            violation(response + " " + action + " but not held: "
                    + (settled.contains(response) ? "written or discarded already" : "never taken by the listener"));
            return false;
        }
        settled.add(response);
        return true;
    }

    /** The fake wrote the response (one the listener handed on at once, or released). */
    void responseWritten(FakeResponse response) {
        settled.add(response);
    }

    /**
     * The listener hands a connection back: with a request only one it holds, of that connection; and only while it
     * holds no response of the connection (every earlier response must have been written).
     */
    void handBack(String connectionId, FakeRequest heldRequest) {
        if (heldRequest != null
                && requestLetGo(heldRequest, "handBack")
                && !heldRequest.connectionId().equals(connectionId)) {
            violation("handBack of connection " + connectionId + " with " + heldRequest);
        }
        if (heldResponses.stream().anyMatch(r -> r.request().connectionId().equals(connectionId))) {
            violation("handBack of connection " + connectionId + " while the listener holds a response of it");
        }
    }

    /** Reports what is still held: each held response and each held request is released or discarded in the end. */
    void checkNothingHeld() {
        for (FakeResponse r : heldResponses) {
            violation(r + " held and never released (returned from onResponseReady) nor discarded");
        }
        for (FakeRequest q : heldRequests.keySet()) {
            violation(q + " held and never released nor handed back");
        }
    }

    void violation(String what) {
        synchronized (violations) {
            violations.add(what);
        }
        try {
            sink.accept(what);
        } catch (RuntimeException e) {
            // the sink's fault: the checks go on
        }
    }

    /** @return the violations found so far, in order */
    List<String> violations() {
        synchronized (violations) {
            return List.copyOf(violations);
        }
    }
}
