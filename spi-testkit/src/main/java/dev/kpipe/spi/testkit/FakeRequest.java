// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi.testkit;

import java.net.InetAddress;
import java.util.Optional;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * A request of a {@link FakeProcessor}, compared by identity as the SPI compares the broker's. Immutable; thread: any.
 */
public final class FakeRequest {
    private final RequestContext context;
    private final AbstractRequest body;
    private final int sizeInBytes;
    private final int number;

    private FakeRequest(RequestContext context, AbstractRequest body, int sizeInBytes, int number) {
        this.context = context;
        this.body = body;
        this.sizeInBytes = sizeInBytes;
        this.number = number;
    }

    /**
     * @param body the parsed body, or {@code null}
     * @param number the request's number in its processor, also its correlation id
     * @return a request of the body's version of {@code api} (the latest without a body), from an anonymous client on
     *     {@code listener}
     */
    static FakeRequest of(
            String listener, String connectionId, ApiKeys api, AbstractRequest body, int sizeInBytes, int number) {
        RequestContext context = new RequestContext(
                new RequestHeader(api, body != null ? body.version() : api.latestVersion(), "fake-client", number),
                connectionId,
                InetAddress.getLoopbackAddress(),
                Optional.empty(),
                KafkaPrincipal.ANONYMOUS,
                ListenerName.normalised(listener),
                SecurityProtocol.PLAINTEXT,
                ClientInformation.EMPTY,
                false);
        return new FakeRequest(context, body, sizeInBytes, number);
    }

    /** @return its context: header (API, correlation id = its number), connection id, listener */
    public RequestContext context() {
        return context;
    }

    /** @return its body as given to {@link FakeProcessor#read}, possibly {@code null} */
    public AbstractRequest body() {
        return body;
    }

    /** @return its size on the wire, bytes */
    public int sizeInBytes() {
        return sizeInBytes;
    }

    /** @return its connection's id */
    public String connectionId() {
        return context.connectionId;
    }

    @Override
    public String toString() {
        return context.header.apiKey() + " request #" + number + " of connection " + context.connectionId;
    }
}
