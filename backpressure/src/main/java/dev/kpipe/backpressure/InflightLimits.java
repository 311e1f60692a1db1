// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.backpressure;

/**
 * Per-connection in-flight limits: requests read on a pipelined connection and not yet answered
 * (response written, or acks=0 completed), counted and summed in bytes. The check happens before
 * the next read is allowed (unmute), so a single request larger than the byte limit is still read
 * when nothing else is in flight: it never waits forever.
 *
 * @param maxRequests the most requests in flight on one connection, at least 1
 * @param maxBytes the most request bytes in flight on one connection, at least 1 (bytes)
 */
public record InflightLimits(int maxRequests, long maxBytes) {

    /**
     * @throws IllegalArgumentException if a limit is below 1
     */
    public InflightLimits {
        if (maxRequests < 1) {
            throw new IllegalArgumentException("maxRequests must be at least 1: " + maxRequests);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be at least 1: " + maxBytes);
        }
    }

    /**
     * Thread: any (pure).
     *
     * @param inflightRequests requests currently in flight on the connection
     * @param inflightBytes bytes currently in flight on the connection
     * @return true if the connection may read one more request
     */
    public boolean admitsAnother(int inflightRequests, long inflightBytes) {
        return inflightRequests < maxRequests && inflightBytes < maxBytes;
    }
}
