// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * S9's slow readers: raw connections to the leader, each writing acks=all produce requests of one ~31 KiB record batch
 * ({@link RawProduce}, not idempotent) back to back, as fast as its socket takes them (a blocking write: it pipelines
 * whatever the broker reads), and never reading a response. Their receive buffer is set small ({@link
 * #RECEIVE_BUFFER_BYTES}) so that the unread responses fill it within the warm-up rather than after thousands of them.
 *
 * <p>Stalled (the default): a connection the broker stops reading (its unread responses filled both sockets' buffers)
 * stays connected and blocked. Active: a watchdog closes a connection that completed no write for {@link
 * #STALL_RECONNECT_NANOS} and its thread connects a new one, so that the slow readers keep writing through the window,
 * as a client that never reads but keeps producing on fresh connections does.
 *
 * <p>Threads: one writing thread per connection, one watchdog when active; counters are atomics read by the caller;
 * {@link #close()} closes the sockets (which ends the blocked writes) and joins the threads.
 */
final class SlowReaders implements AutoCloseable {
    /** {@code SO_RCVBUF} of each slow reader's socket, bytes. */
    static final int RECEIVE_BUFFER_BYTES = 4096;
    /** Records per request. */
    static final int RECORDS = 30;
    /** The {@code client.id} of the slow readers' requests, theirs alone: {@code --s9-slow-quota-kib} quotas it. */
    static final String CLIENT_ID = "kpipe-bench-slow-reader";
    /** Each record's value, bytes: 30 x 1 KiB, about 31 KiB on the wire with the batch and request headers. */
    static final int VALUE_BYTES = 1024;
    /** Active: a connection that completed no write for this long (ns) is closed and replaced by a new one. */
    static final long STALL_RECONNECT_NANOS = 500_000_000L;

    private final int port;
    private final boolean active;
    private final AtomicReferenceArray<SocketChannel> channels;
    private final List<Thread> threads = new ArrayList<>();
    private final long windowStart;
    private final long windowEnd;
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong writtenInWindow = new AtomicLong();
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong reconnectsInWindow = new AtomicLong();
    /** Per connection: when its last write inside the window completed, or {@link Long#MIN_VALUE}. */
    private final AtomicLongArray lastWriteInWindow;
    /** Per connection: when it connected or last completed a write ({@link System#nanoTime()}). */
    private final AtomicLongArray lastProgress;

    private final AtomicLong failures = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private volatile boolean closing;

    private SlowReaders(int port, int n, boolean active, long windowStart, long windowEnd) {
        this.port = port;
        this.active = active;
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
        this.channels = new AtomicReferenceArray<>(n);
        this.lastWriteInWindow = new AtomicLongArray(n);
        this.lastProgress = new AtomicLongArray(n);
        for (int i = 0; i < n; i++) {
            lastWriteInWindow.set(i, Long.MIN_VALUE);
        }
    }

    /**
     * @param topic the slow readers' topic
     * @return the size of one of their requests on the wire, size prefix included, bytes
     */
    static int requestBytes(String topic) {
        return RawProduce.request(topic, 0, (short) -1, RECORDS, VALUE_BYTES, CLIENT_ID)
                .remaining();
    }

    /**
     * Connects {@code n} slow readers and starts their writing threads (and, if active, the watchdog).
     *
     * @param port the leader's client port on 127.0.0.1
     * @param topic their topic (partition 0)
     * @param n how many
     * @param active replace a connection the broker stopped reading by a new one ({@link #STALL_RECONNECT_NANOS})
     * @param windowStart start of the measured window, {@link System#nanoTime()}
     * @param windowEnd its end
     * @return the running slow readers
     * @throws IOException if one cannot connect (the ones connected are closed)
     */
    static SlowReaders start(int port, String topic, int n, boolean active, long windowStart, long windowEnd)
            throws IOException {
        SlowReaders r = new SlowReaders(port, n, active, windowStart, windowEnd);
        try {
            for (int i = 0; i < n; i++) {
                r.connect(i);
            }
        } catch (IOException | RuntimeException e) {
            r.close();
            throw e;
        }
        for (int i = 0; i < n; i++) {
            int index = i;
            r.startThread(() -> r.write(index, topic), "bench-slow-reader-" + i);
        }
        if (active) {
            r.startThread(r::watch, "bench-slow-reader-watchdog");
        }
        return r;
    }

    private void startThread(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    private SocketChannel connect(int index) throws IOException {
        SocketChannel ch = SocketChannel.open();
        channels.set(index, ch);
        ch.setOption(StandardSocketOptions.SO_RCVBUF, RECEIVE_BUFFER_BYTES);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.connect(new InetSocketAddress("127.0.0.1", port));
        lastProgress.set(index, System.nanoTime());
        return ch;
    }

    private void write(int index, String topic) {
        ByteBuffer request = RawProduce.request(topic, 0, (short) -1, RECORDS, VALUE_BYTES, CLIENT_ID);
        int correlationId = 0;
        SocketChannel ch = channels.get(index);
        while (!closing) {
            try {
                RawProduce.setCorrelationId(request, ++correlationId);
                request.rewind();
                while (request.hasRemaining()) {
                    ch.write(request);
                }
                written.incrementAndGet();
                long now = System.nanoTime();
                lastProgress.set(index, now);
                if (now >= windowStart && now < windowEnd) {
                    writtenInWindow.incrementAndGet();
                    lastWriteInWindow.set(index, now);
                }
            } catch (IOException e) { // closed by the watchdog or close() (ClosedChannelException), or by the broker
                if (closing) {
                    return;
                }
                if (!active || !(e instanceof ClosedChannelException)) {
                    fail(e);
                    return;
                }
                try {
                    ch = connect(index);
                    correlationId = 0;
                    reconnects.incrementAndGet();
                    long now = System.nanoTime();
                    if (now >= windowStart && now < windowEnd) {
                        reconnectsInWindow.incrementAndGet();
                    }
                } catch (IOException c) {
                    fail(c);
                    return;
                }
            }
        }
    }

    /** Active: closes every connection that completed no write for {@link #STALL_RECONNECT_NANOS}; 50 ms period. */
    private void watch() {
        while (!closing) {
            long now = System.nanoTime();
            for (int i = 0; i < channels.length(); i++) {
                if (now - lastProgress.get(i) > STALL_RECONNECT_NANOS) {
                    lastProgress.set(i, now); // once: its thread reconnects
                    closeQuietly(channels.get(i));
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    private void fail(Exception e) {
        failures.incrementAndGet();
        firstFailure.compareAndSet(null, e.toString());
    }

    /** @return requests written completely since the start, all connections */
    long written() {
        return written.get();
    }

    /** @return requests whose write completed inside the window, all connections */
    long writtenInWindow() {
        return writtenInWindow.get();
    }

    /** @return active: connections replaced since the start (0 when stalled readers stay) */
    long reconnects() {
        return reconnects.get();
    }

    /** @return active: connections replaced inside the window */
    long reconnectsInWindow() {
        return reconnectsInWindow.get();
    }

    /**
     * @param quietNanos how long a connection must have completed no write before the window's end
     * @return connections stalled at the window's end: no write completed in its last {@code quietNanos} (the broker
     *     stopped reading them: their unread responses filled both sockets' buffers, or kpipe's limits hold them)
     */
    int stalledAtWindowEnd(long quietNanos) {
        int stalled = 0;
        for (int i = 0; i < lastWriteInWindow.length(); i++) {
            long last = lastWriteInWindow.get(i);
            if (last == Long.MIN_VALUE || last < windowEnd - quietNanos) {
                stalled++;
            }
        }
        return stalled;
    }

    /** @return connections whose writing ended before {@link #close()} (the broker closed it, most likely) */
    long failures() {
        return failures.get();
    }

    /** @return the first such failure, or null */
    String firstFailure() {
        return firstFailure.get();
    }

    /** Closes every connection and joins the threads (up to 5 s each). */
    @Override
    public void close() {
        closing = true;
        for (int i = 0; i < channels.length(); i++) {
            SocketChannel ch = channels.get(i);
            if (ch != null) {
                closeQuietly(ch);
            }
        }
        for (Thread t : threads) {
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
