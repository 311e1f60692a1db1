// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import dev.kpipe.spi.NetworkProcessor;

/**
 * One connection's Kafka channel as kpipe keeps it, the part of {@link ConnectionPipeline} that is its channel's mute
 * and its schedule: muted or not (changed together with the selector's interest), and whether the connection is
 * queued for evaluation at its processor's next round ({@link ProcessorQueues#scheduled}). Only this class writes
 * these fields.
 *
 * <p>Thread: the connection's network thread; {@link #id()} and {@link #muted()} are read by the dump (a moment
 * stale, never torn).
 *
 * @param <C> the connection type (its own node in its processor's queues)
 */
abstract class ConnectionChannel<Q, S, C extends ConnectionChannel<Q, S, C>> extends SignalQueue.Node<C> {

    private final String id;
    private final ProcessorQueues<Q, S, C> queues;
    /** What kpipe last made of the selector's mute state: reading a request mutes. */
    private boolean muted = true;
    /** Listed in its processor's queue for evaluation. */
    private boolean scheduled;

    /**
     * @param id Kafka's connection id
     * @param queues its processor's
     */
    ConnectionChannel(String id, ProcessorQueues<Q, S, C> queues) {
        this.id = id;
        this.queues = queues;
    }

    /** @return this connection, as its processor's queues list it */
    abstract C self();

    /** @return true while kpipe owns the connection */
    abstract boolean owned();

    /** @return Kafka's connection id; thread: any */
    final String id() {
        return id;
    }

    /** @return the broker's processor of the connection; thread: any */
    final NetworkProcessor<Q, S> processor() {
        return queues.processor();
    }

    /** Kafka muted the channel as it read a request ({@code Processor} mutes after every read). */
    final void readMutedChannel() {
        muted = true;
    }

    /** Mutes Kafka's channel, if kpipe has not: the selector reads nothing more from it. */
    final void mute() {
        if (!muted) {
            queues.processor().mute(id);
            muted = true;
        }
    }

    /** Unmutes Kafka's channel, if kpipe keeps it muted: the selector reads its next request. */
    final void unmute() {
        if (muted) {
            queues.processor().unmute(id);
            muted = false;
        }
    }

    /** @return true while kpipe keeps Kafka's channel muted; thread: any (a moment stale from another) */
    final boolean muted() {
        return muted;
    }

    /**
     * Mutes the connection and evaluates it at the next safe point, if kpipe owns it: after a move to
     * CLOSING_AFTER_DRAIN, it is closed once every earlier response is written.
     */
    final void muteAndSchedule() {
        if (owned()) {
            mute();
            schedule();
        }
    }

    /** Queues the connection for evaluation at its processor's next round (once). */
    final void schedule() {
        if (!scheduled) {
            scheduled = true;
            queues.scheduled(self());
        }
    }

    /** @return true while queued for evaluation at its processor's next round */
    final boolean scheduled() {
        return scheduled;
    }

    /** It was taken from its processor's queue for evaluation: it may be queued again. */
    final void evaluationStarted() {
        scheduled = false;
    }
}
