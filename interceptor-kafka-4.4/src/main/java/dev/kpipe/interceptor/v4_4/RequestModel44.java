// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaLine;
import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.spi.ResponseKind;
import java.util.List;
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

    static final String REQUEST = "org.apache.kafka.network.Request";
    static final String RESPONSE = "org.apache.kafka.network.Response";

    /**
     * The model as data: the Java request and response classes, the members and response classes it uses, and the
     * completion setter {@code callbackRequestCompleteTimeNanos(java.util.OptionalLong)}.
     */
    static final KafkaLine.Requests REQUESTS = new KafkaLine.Requests(
            REQUEST,
            RESPONSE,
            List.of(
                    HookPoint.method(REQUEST, "context"),
                    HookPoint.method(REQUEST, "body"),
                    HookPoint.method(REQUEST, "sizeInBytes"),
                    HookPoint.method(REQUEST, "processor"),
                    HookPoint.method(REQUEST, "responseDequeueTimeNanos", "long"),
                    HookPoint.method(REQUEST, "updateRequestMetrics", "long", "java.util.Optional"),
                    HookPoint.method(RESPONSE, "request"),
                    HookPoint.method(RESPONSE, "responseLog"),
                    HookPoint.method("org.apache.kafka.network.SendResponse", "request"),
                    HookPoint.method("org.apache.kafka.network.NoOpResponse", "request"),
                    HookPoint.method("org.apache.kafka.network.CloseConnectionResponse", "request"),
                    HookPoint.method("org.apache.kafka.network.StartThrottlingResponse", "request"),
                    HookPoint.method("org.apache.kafka.network.EndThrottlingResponse", "request")),
            HookPoint.method(REQUEST, "callbackRequestCompleteTimeNanos", "java.util.OptionalLong"),
            RequestModel44::new);

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
