// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

/**
 * One connection's wait on the storage side: whether storage-side saturation keeps it muted, and the topics of its
 * last produce (kept while a storage plugin checks topics). A part of {@link ConnectionPipeline}, the only class that
 * calls it.
 *
 * <p>Thread: the connection's network thread; {@link #waiting()} is read by the dump (a moment stale, never torn).
 */
final class PressureWait {

    private final PipelineStats stats;
    private boolean waiting;
    /** Names or ids ({@code RequestClassifier.topicsOf}), or {@code null}. */
    private Object[] topics;

    /** @param stats where a wait is counted when it starts ({@code wait-storage-pressure-total}) */
    PressureWait(PipelineStats stats) {
        this.stats = stats;
    }

    /** @return true if the wait started now (counted); false if it was waiting already */
    boolean started() {
        if (waiting) {
            return false;
        }
        waiting = true;
        stats.waitStarted(WaitReason.STORAGE_PRESSURE);
        return true;
    }

    /** @return true if a wait ended now; false if it was not waiting */
    boolean ended() {
        if (!waiting) {
            return false;
        }
        waiting = false;
        return true;
    }

    /** @return true while storage-side saturation keeps the connection muted */
    boolean waiting() {
        return waiting;
    }

    /** @param produced the topics of the produce just read, or {@code null} */
    void producedTo(Object[] produced) {
        topics = produced;
    }

    /** @return the topics of the last produce, if kept, else {@code null} */
    Object[] topics() {
        return topics;
    }
}
