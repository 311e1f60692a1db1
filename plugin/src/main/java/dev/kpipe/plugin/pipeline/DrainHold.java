// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.Reauthentication;

/**
 * What a draining connection holds until every earlier response is written: an exclusive request
 * ({@code DRAINING_EXCLUSIVE}, and {@code CLOSING_AFTER_DRAIN} if one was held when the close was decided) or a SASL
 * re-authentication ({@code DRAINING_REAUTHENTICATION}, KIP-368), counted in {@code held-requests} while held; and
 * whether the wake-up at the end of that re-authentication's quiet period was asked for. A part of
 * {@link ConnectionPipeline}, the only class that calls it.
 *
 * <p>Thread: the connection's network thread.
 */
final class DrainHold<Q> {

    private final PipelineStats stats;
    private Q request;
    private Reauthentication reauthentication;
    private boolean quietWakeupRequested;

    /** @param stats {@code held-requests}, which moves with what is held here */
    DrainHold(PipelineStats stats) {
        this.stats = stats;
    }

    /** @param held an exclusive request now held for the drain */
    void hold(Q held) {
        request = held;
        stats.heldRequests.incrementAndGet();
    }

    /** @param held a re-authentication now held for the drain */
    void holdReauthentication(Reauthentication held) {
        reauthentication = held;
        stats.heldRequests.incrementAndGet();
    }

    /** @return the held request, no longer held (nor counted); {@code null} if none */
    Q takeRequest() {
        Q h = request;
        if (h != null) {
            request = null;
            stats.heldRequests.decrementAndGet();
        }
        return h;
    }

    /** @return the held re-authentication, no longer held (nor counted); {@code null} if none */
    Reauthentication takeReauthentication() {
        Reauthentication h = reauthentication;
        if (h != null) {
            reauthentication = null;
            stats.heldRequests.decrementAndGet();
        }
        return h;
    }

    /** @return the held request or re-authentication, or {@code null} */
    Object held() {
        return request != null ? request : reauthentication;
    }

    /** @return true the first time only: the caller schedules the quiet period's wake-up */
    boolean requestQuietWakeup() {
        if (quietWakeupRequested) {
            return false;
        }
        quietWakeupRequested = true;
        return true;
    }
}
