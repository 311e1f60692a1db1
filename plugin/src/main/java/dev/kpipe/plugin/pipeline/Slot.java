package dev.kpipe.plugin.pipeline;

/** One request read on a pipelined connection, in arrival order, and its response once ready. */
final class Slot {
    final Object request;
    final int bytes;
    /** When the request was read (the coordinator's clock, ns): the age the connection dump shows. */
    final long readNanos;
    /** The response, once the processor dequeued it; {@code null} before. */
    Object response;

    Slot(Object request, int bytes, long readNanos) {
        this.request = request;
        this.bytes = bytes;
        this.readNanos = readNanos;
    }
}
