// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * Counts the waits of one connection that are found at its evaluations, not told by an event: at a per-connection limit
 * ({@link WaitReason#INFLIGHT_LIMIT}), undrained ({@link WaitReason#UNDRAINED}) and on probation
 * ({@link WaitReason#CLIENT_THROTTLED}), each once when it starts to hold
 * ({@code wait-<reason>-total}). Network thread.
 */
final class WaitStarts {
    private static final WaitReason[] EDGES = {
        WaitReason.INFLIGHT_LIMIT, WaitReason.UNDRAINED, WaitReason.CLIENT_THROTTLED
    };

    private final PipelineStats stats;
    /** The reasons that held at the last evaluation, {@link WaitReason#bit()}s. */
    private int held;

    WaitStarts(PipelineStats stats) {
        this.stats = stats;
    }

    /** @param reasons the reasons that hold at this evaluation; those of {@link #EDGES} that did not before count */
    void evaluated(int reasons) {
        int started = reasons & ~held;
        held = reasons;
        for (WaitReason r : EDGES) {
            if ((started & r.bit()) != 0) {
                stats.waitStarted(r);
            }
        }
    }
}
