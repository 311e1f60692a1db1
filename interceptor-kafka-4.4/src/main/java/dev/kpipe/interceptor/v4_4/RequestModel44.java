// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.spi.ResponseKind;
import kafka.network.RequestChannel;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.network.CloseConnectionResponse;
import org.apache.kafka.network.EndThrottlingResponse;
import org.apache.kafka.network.NoOpResponse;
import org.apache.kafka.network.Request;
import org.apache.kafka.network.Response;
import org.apache.kafka.network.SendResponse;
import org.apache.kafka.network.StartThrottlingResponse;

/** {@link RequestModel} over Kafka 4.4's {@code org.apache.kafka.network.Request} and {@code Response}. Stateless. */
final class RequestModel44 implements RequestModel {

    @Override
    public int processorOf(Object request) {
        return ((Request) request).processor();
    }

    @Override
    public RequestContext contextOf(Object request) {
        return ((Request) request).context();
    }

    @Override
    public AbstractRequest bodyOf(Object request) {
        return ((Request) request).body();
    }

    @Override
    public int sizeInBytesOf(Object request) {
        return ((Request) request).sizeInBytes();
    }

    @Override
    public void sendRequest(RequestChannel channel, Object request) {
        channel.sendRequest((Request) request);
    }

    @Override
    public Object requestOf(Object response) {
        return ((Response) response).request();
    }

    @Override
    public ResponseKind kindOf(Object response) {
        if (response instanceof SendResponse) {
            return ResponseKind.SEND;
        } else if (response instanceof NoOpResponse) {
            return ResponseKind.NO_OP;
        } else if (response instanceof CloseConnectionResponse) {
            return ResponseKind.CLOSE_CONNECTION;
        } else if (response instanceof StartThrottlingResponse) {
            return ResponseKind.START_THROTTLING;
        } else if (response instanceof EndThrottlingResponse) {
            return ResponseKind.END_THROTTLING;
        }
        throw new IllegalArgumentException(
                "kpipe: unknown response type " + response.getClass().getName());
    }

    @Override
    public void markDequeued(Object response, long nanoTime) {
        ((Response) response).request().responseDequeueTimeNanos(nanoTime);
    }

    @Override
    public void discard(Object response) {
        Response r = (Response) response;
        r.request().updateRequestMetrics(0L, r.responseLog());
    }
}
