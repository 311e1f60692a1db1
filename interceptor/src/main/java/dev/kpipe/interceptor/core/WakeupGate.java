package dev.kpipe.interceptor.core;

/**
 * Decides whether a wake-up of a processor's selector is needed, so that kpipe's own wake-ups ({@code
 * NetworkProcessor.wakeup}: a request dispatched, the byte budget admitting a connection) cost nothing while the
 * network thread is sure to run a round before it blocks again.
 *
 * <p>{@code Processor.run} loops {@code configureNewConnections, processNewResponses, poll,
 * processCompletedReceives, processCompletedSends, processDisconnected, closeExcessConnections} (the same in Kafka
 * 3.8 to 4.4), all in one {@code try}; only {@code poll} blocks, and it runs only after {@code processNewResponses}
 * returned normally, whose exit runs a round. From {@code processCompletedReceives} (the poll returned) to that
 * exit the thread is <b>awake</b>: a wake-up then would only make its next poll return at once (a write of the
 * selector's wake-up descriptor on the caller's thread, then a read and an extra loop on the network thread).
 *
 * <p>Ordering (Dekker's): the caller publishes its signal with a volatile write or CAS (the plugin's signal list)
 * before {@link #needsWakeup}'s volatile read; the network thread's {@link #beforePoll} writes {@code awake = false}
 * before the last round of the loop reads the signals. So either the caller reads {@code false} and wakes the
 * selector, or it read a {@code true} written before that store, and that round sees its signal.
 *
 * <p>Threads: {@link #pollReturned} and {@link #beforePoll} on the processor's network thread; {@link #needsWakeup}
 * on any thread. Allocates nothing.
 */
final class WakeupGate {

    /** True from the end of a poll to the round before the next poll. */
    private volatile boolean awake;

    /** {@code processCompletedReceives} enter: the poll returned. Network thread. */
    void pollReturned() {
        awake = true;
    }

    /** {@code processNewResponses} normal exit, before its round: the next poll follows that round. Network thread. */
    void beforePoll() {
        awake = false;
    }

    /**
     * @return false if the network thread is sure to run a round after this call without blocking; true if the
     *     caller must wake the selector. Any thread, after publishing what the round is to see.
     */
    boolean needsWakeup() {
        return !awake;
    }
}
