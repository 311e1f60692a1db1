package dev.kpipe.plugin.pipeline;

/** One request read on a pipelined connection, in arrival order, and its response once ready. */
final class Slot {
    final Object request;
    final int bytes;
    /** The response, once the processor dequeued it; {@code null} before. */
    Object response;

    Slot(Object request, int bytes) {
        this.request = request;
        this.bytes = bytes;
    }
}
