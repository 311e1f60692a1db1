// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * What others may read of one connection's requests in flight ({@link ConnectionPipeline#inflight()}): the
 * {@link InflightRequests} themselves are written by their connection only.
 *
 * <p>Thread: the connection's network thread, except the published counts (any thread).
 */
interface InflightView<Q, S> {
    /** @return true if no request is in flight */
    boolean isEmpty();

    /** @return requests read and not yet answered */
    int size();

    /** @return their size, bytes */
    long bytes();

    /** @return true while the head request's response is handed to the broker and not yet completed */
    boolean sendOutstanding();

    /** @return responses ready but held behind an earlier one of this connection */
    int heldResponses();

    /** @return true while the head's write is incomplete and further responses are held behind it */
    boolean undrained();

    /** @return requests in flight as last published; thread: any */
    int publishedCount();

    /** @return bytes in flight as last published; thread: any */
    long publishedBytes();

    /** @return the oldest in-flight request's read time (the coordinator's clock), 0 for none; thread: any */
    long publishedOldestReadNanos();

    /** @return responses held for ordering as last published; thread: any */
    int publishedHeldResponses();

    /** @return {@link #undrained()} as last published; thread: any */
    boolean publishedUndrained();

    /** @return the first violated invariant of the class comment, or {@code null}; network thread (or a test) */
    String invariantViolation();

    /** @param action called with each request in flight and its response (or null), oldest first; for tests */
    void forEach(java.util.function.BiConsumer<Q, S> action);
}
