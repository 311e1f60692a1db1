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

/**
 * S9's slow readers: raw connections to the leader, each writing acks=all produce requests of one ~31 KiB record batch
 * ({@link RawProduce}, not idempotent) back to back, as fast as its socket takes them (a blocking write: it pipelines
 * whatever the broker reads), and never reading a response. Their receive buffer is set small ({@link
 * #RECEIVE_BUFFER_BYTES}) so that the unread responses fill it within the warm-up rather than after thousands of them.
 *
 * <p>Threads: one writing thread per connection; counters are atomics read by the caller; {@link #close()} closes the
 * sockets (which ends the blocked writes) and joins the threads.
 */
final class SlowReaders implements AutoCloseable {
    /** {@code SO_RCVBUF} of each slow reader's socket, bytes. */
    static final int RECEIVE_BUFFER_BYTES = 4096;
    /** Records per request. */
    static final int RECORDS = 30;
    /** Each record's value, bytes: 30 x 1 KiB, about 31 KiB on the wire with the batch and request headers. */
    static final int VALUE_BYTES = 1024;

    private final List<SocketChannel> channels = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final long windowStart;
    private final long windowEnd;
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong writtenInWindow = new AtomicLong();
    /** Per connection: when its last write inside the window completed, or {@link Long#MIN_VALUE}. */
    private final AtomicLongArray lastWriteInWindow;

    private final AtomicLong failures = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private volatile boolean closing;

    private SlowReaders(int n, long windowStart, long windowEnd) {
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
        this.lastWriteInWindow = new AtomicLongArray(n);
        for (int i = 0; i < n; i++) {
            lastWriteInWindow.set(i, Long.MIN_VALUE);
        }
    }

    /**
     * @param topic the slow readers' topic
     * @return the size of one of their requests on the wire, size prefix included, bytes
     */
    static int requestBytes(String topic) {
        return RawProduce.request(topic, 0, (short) -1, RECORDS, VALUE_BYTES).remaining();
    }

    /**
     * Connects {@code n} slow readers and starts their writing threads.
     *
     * @param port the leader's client port on 127.0.0.1
     * @param topic their topic (partition 0)
     * @param n how many
     * @param windowStart start of the measured window, {@link System#nanoTime()}
     * @param windowEnd its end
     * @return the running slow readers
     * @throws IOException if one cannot connect (the ones connected are closed)
     */
    static SlowReaders start(int port, String topic, int n, long windowStart, long windowEnd) throws IOException {
        SlowReaders r = new SlowReaders(n, windowStart, windowEnd);
        try {
            for (int i = 0; i < n; i++) {
                SocketChannel ch = SocketChannel.open();
                r.channels.add(ch);
                ch.setOption(StandardSocketOptions.SO_RCVBUF, RECEIVE_BUFFER_BYTES);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.connect(new InetSocketAddress("127.0.0.1", port));
            }
        } catch (IOException | RuntimeException e) {
            r.close();
            throw e;
        }
        for (int i = 0; i < n; i++) {
            SocketChannel ch = r.channels.get(i);
            int index = i;
            Thread t = new Thread(() -> r.write(index, ch, topic), "bench-slow-reader-" + i);
            t.setDaemon(true);
            r.threads.add(t);
            t.start();
        }
        return r;
    }

    private void write(int index, SocketChannel ch, String topic) {
        ByteBuffer request = RawProduce.request(topic, 0, (short) -1, RECORDS, VALUE_BYTES);
        int correlationId = 0;
        try {
            while (!closing) {
                RawProduce.setCorrelationId(request, ++correlationId);
                request.rewind();
                while (request.hasRemaining()) {
                    ch.write(request);
                }
                written.incrementAndGet();
                long now = System.nanoTime();
                if (now >= windowStart && now < windowEnd) {
                    writtenInWindow.incrementAndGet();
                    lastWriteInWindow.set(index, now);
                }
            }
        } catch (ClosedChannelException e) {
            if (!closing) {
                fail(e);
            }
        } catch (IOException e) {
            if (!closing) {
                fail(e); // e.g. the broker closed the connection
            }
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

    /** Closes every connection and joins the writing threads (up to 5 s each). */
    @Override
    public void close() {
        closing = true;
        for (SocketChannel ch : channels) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing anyway
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
