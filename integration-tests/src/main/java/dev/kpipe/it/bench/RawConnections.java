// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.protocol.Errors;

/**
 * S10's raw connections to one broker: blocking sockets, each upgraded by one acks=1 produce request of one record
 * ({@link RawProduce}) whose response is read, then used one round trip at a time ({@link #roundTrip}). No thread of
 * its own: one thread at a time uses it (S10's driver after {@link #open}).
 */
final class RawConnections implements AutoCloseable {
    /** Connections connected, and sent their first request, before their responses are read. */
    private static final int CHUNK = 200;

    private final List<SocketChannel> channels = new ArrayList<>();
    private final int[] nextCorrelationId;
    private final ByteBuffer request;
    private final ByteBuffer size = ByteBuffer.allocate(4);

    private RawConnections(int n, String topic, int valueBytes) {
        this.nextCorrelationId = new int[n];
        this.request = RawProduce.request(topic, 0, (short) 1, 1, valueBytes);
    }

    /**
     * Connects {@code n} connections to 127.0.0.1:{@code port}, each sending one produce request (acks=1, one record of
     * {@code valueBytes} to partition 0 of {@code topic}) and reading its response, {@link #CHUNK} at a time.
     *
     * @return the connections, every one idle after its first response
     * @throws IOException if one cannot connect, or a produce fails (the ones opened are closed)
     */
    static RawConnections open(int port, int n, String topic, int valueBytes) throws IOException {
        RawConnections c = new RawConnections(n, topic, valueBytes);
        try {
            for (int from = 0; from < n; from += CHUNK) {
                int to = Math.min(n, from + CHUNK);
                for (int i = from; i < to; i++) {
                    SocketChannel ch = SocketChannel.open();
                    c.channels.add(ch);
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    ch.connect(new InetSocketAddress("127.0.0.1", port));
                    c.send(i);
                }
                for (int i = from; i < to; i++) {
                    c.receive(i);
                }
            }
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** @return the number of connections */
    int size() {
        return channels.size();
    }

    /**
     * One produce request on connection {@code i} and its response, blocking.
     *
     * @param i the connection's index
     * @throws IOException on a socket failure or a produce error
     */
    void roundTrip(int i) throws IOException {
        send(i);
        receive(i);
    }

    private void send(int i) throws IOException {
        RawProduce.setCorrelationId(request, ++nextCorrelationId[i]);
        request.rewind();
        SocketChannel ch = channels.get(i);
        while (request.hasRemaining()) {
            ch.write(request);
        }
    }

    private void receive(int i) throws IOException {
        SocketChannel ch = channels.get(i);
        size.clear();
        readFully(ch, size);
        ByteBuffer body = ByteBuffer.allocate(size.getInt(0));
        readFully(ch, body);
        body.flip();
        Errors error = RawProduce.responseError(body, nextCorrelationId[i]);
        if (error != Errors.NONE) {
            throw new IOException("produce on raw connection " + i + " failed: " + error);
        }
    }

    private static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new EOFException("the broker closed the connection");
            }
        }
    }

    /** Closes every connection. */
    @Override
    public void close() {
        for (SocketChannel ch : channels) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
