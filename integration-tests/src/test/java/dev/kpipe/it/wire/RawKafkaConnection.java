// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

/**
 * A blocking Kafka wire-protocol connection over a socket (plain, or TLS given by the caller), built
 * from kafka-clients' request and response classes, for tests that need to control exactly what is
 * on the wire (back-to-back requests, chosen correlation ids, truncated frames). Not thread-safe.
 */
public final class RawKafkaConnection implements AutoCloseable {

    /** A response read from the wire. */
    public record Received(int correlationId, AbstractResponse response) {}

    private final Socket socket;
    private final DataOutputStream out;
    private final DataInputStream in;
    private final String clientId;

    /**
     * @param host the broker host
     * @param port the broker port
     * @param clientId the client id put in every request header
     * @param readTimeout how long {@link #receive} waits for one response
     * @throws IOException if the connection fails
     */
    public RawKafkaConnection(String host, int port, String clientId, Duration readTimeout) throws IOException {
        this(connect(host, port), clientId, readTimeout);
    }

    /**
     * Speaks the Kafka protocol over a socket the caller connected, e.g. an {@code SSLSocket} for a TLS listener;
     * the connection owns it from now on.
     *
     * @param socket a connected socket
     * @param clientId the client id put in every request header
     * @param readTimeout how long {@link #receive} waits for one response
     * @throws IOException if the socket cannot be configured
     */
    public RawKafkaConnection(Socket socket, String clientId, Duration readTimeout) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        socket.setSoTimeout((int) readTimeout.toMillis());
        this.out = new DataOutputStream(socket.getOutputStream());
        this.in = new DataInputStream(socket.getInputStream());
        this.clientId = clientId;
    }

    private static Socket connect(String host, int port) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), 10_000);
        } catch (IOException e) {
            socket.close();
            throw e;
        }
        return socket;
    }

    /**
     * Serializes one request, size prefix included, without writing it (to write many in one go with
     * {@link #sendRaw}).
     *
     * @param correlationId the correlation id (any int)
     * @param request the request, built for the version to send
     * @return the frame
     */
    public byte[] frame(int correlationId, AbstractRequest request) {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId, correlationId);
        ByteBuffer buf = request.serializeWithHeader(header);
        ByteBuffer frame = ByteBuffer.allocate(4 + buf.remaining());
        frame.putInt(buf.remaining()).put(buf);
        return frame.array();
    }

    /**
     * Writes one size-prefixed request; does not wait for its response.
     *
     * @param correlationId the correlation id (any int)
     * @param request the request, built for the version to send
     * @throws IOException if writing fails
     */
    public void send(int correlationId, AbstractRequest request) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId, correlationId);
        ByteBuffer buf = request.serializeWithHeader(header);
        out.writeInt(buf.remaining());
        out.write(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
        out.flush();
    }

    /**
     * Writes raw bytes, for malformed-input tests.
     *
     * @param bytes the bytes
     * @throws IOException if writing fails
     */
    public void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /**
     * Reads the next response, which the caller expects to answer a request of the given API and
     * version.
     *
     * @param apiKey the API of the expected response
     * @param version the version of the request it answers
     * @return the correlation id and the parsed response
     * @throws IOException on timeout ({@link SocketTimeoutException}) or a closed connection
     *     ({@link EOFException})
     */
    public Received receive(ApiKeys apiKey, short version) throws IOException {
        int size = in.readInt();
        byte[] bytes = new byte[size];
        in.readFully(bytes);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        ResponseHeader header = ResponseHeader.parse(buf, apiKey.responseHeaderVersion(version));
        AbstractResponse response = AbstractResponse.parseResponse(apiKey, new ByteBufferAccessor(buf), version);
        return new Received(header.correlationId(), response);
    }

    /**
     * Reads the next response frame and returns only its correlation id.
     *
     * @return the correlation id of the next response
     * @throws IOException on timeout or a closed connection
     */
    public int receiveCorrelationId() throws IOException {
        int size = in.readInt();
        byte[] bytes = new byte[size];
        in.readFully(bytes);
        return ByteBuffer.wrap(bytes).getInt();
    }

    /**
     * Reads the next size-prefixed frame as it is on the wire (without the size prefix).
     *
     * @return the frame's bytes: the response header (correlation id first), then the body
     * @throws IOException on timeout ({@link SocketTimeoutException}), a closed connection ({@link EOFException}) or a
     *     reset connection ({@link java.net.SocketException})
     */
    public byte[] receiveFrame() throws IOException {
        int size = in.readInt();
        byte[] bytes = new byte[size];
        in.readFully(bytes);
        return bytes;
    }

    /**
     * Closes the writing side (sends FIN); the broker sees end of stream, responses can still be read.
     *
     * @throws IOException if the socket fails
     */
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /**
     * Changes how long one read waits.
     *
     * @param timeout the read timeout
     * @throws IOException if the socket fails
     */
    public void readTimeout(Duration timeout) throws IOException {
        socket.setSoTimeout((int) timeout.toMillis());
    }

    /**
     * Closes the socket with an RST instead of a FIN ({@code SO_LINGER} 0): the broker sees a reset connection.
     *
     * @throws IOException if the socket fails
     */
    public void abort() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    /**
     * @return true if the broker closed the connection (reads EOF within the read timeout)
     * @throws IOException on timeout or other errors
     */
    public boolean closedByPeer() throws IOException {
        return in.read() == -1;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
