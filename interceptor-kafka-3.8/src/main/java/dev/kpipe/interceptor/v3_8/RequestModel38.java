// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v3_8;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaLine;
import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.spi.ResponseKind;
import java.util.List;
import kafka.network.RequestChannel;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * {@link RequestModel} over the Scala {@code kafka.network.RequestChannel.Request} and {@code RequestChannel.Response}
 * of Kafka 3.8 to 4.3: the members it calls ({@code processor}, {@code context}, {@code body(ClassTag)},
 * {@code sizeInBytes}, {@code responseDequeueTimeNanos_$eq}, {@code updateRequestMetrics(long, Response)},
 * {@code Response.request}, {@code RequestChannel.sendRequest}) and the five response classes have the same
 * descriptors on each of those lines ({@code javap -p}), so the bindings for 3.8–3.9 ({@link Binding38}), 4.0 and
 * 4.1–4.3 share this one class, compiled here against the oldest, 3.8.1. Stateless.
 */
public final class RequestModel38 implements RequestModel {

    /** {@code kafka.network.RequestChannel$Request}, the request class of 3.8 to 4.3. */
    public static final String REQUEST = "kafka.network.RequestChannel$Request";
    /** {@code kafka.network.RequestChannel$Response}, the response base class of 3.8 to 4.3. */
    public static final String RESPONSE = "kafka.network.RequestChannel$Response";

    /**
     * The model as data: the Scala request and response classes, the members and response classes it uses, and the
     * completion setter {@code callbackRequestCompleteTimeNanos_$eq(scala.Option)} (the same on 3.8 to 4.3).
     */
    public static final KafkaLine.Requests REQUESTS = new KafkaLine.Requests(
            REQUEST,
            RESPONSE,
            List.of(
                    HookPoint.method(REQUEST, "context"),
                    HookPoint.method(REQUEST, "body", "scala.reflect.ClassTag"),
                    HookPoint.method(REQUEST, "sizeInBytes"),
                    HookPoint.method(REQUEST, "processor"),
                    HookPoint.method(REQUEST, "responseDequeueTimeNanos_$eq", "long"),
                    HookPoint.method(REQUEST, "updateRequestMetrics", "long", RESPONSE),
                    HookPoint.method(RESPONSE, "request"),
                    HookPoint.type("kafka.network.RequestChannel$SendResponse"),
                    HookPoint.type("kafka.network.RequestChannel$NoOpResponse"),
                    HookPoint.type("kafka.network.RequestChannel$CloseConnectionResponse"),
                    HookPoint.type("kafka.network.RequestChannel$StartThrottlingResponse"),
                    HookPoint.type("kafka.network.RequestChannel$EndThrottlingResponse")),
            HookPoint.method(REQUEST, "callbackRequestCompleteTimeNanos_$eq", "scala.Option"),
            RequestModel38::new);

    /**
     * {@code Request.body} is {@code body[T <: AbstractRequest](implicit ClassTag[T])}: with {@code AbstractRequest} it
     * returns the parsed body as is ({@code loggableRequest} would copy and redact some request types). A holder, so
     * that reading {@link #REQUESTS} (at binding choice) initialises nothing of Scala's.
     */
    private static final class AnyRequest {
        static final ClassTag<AbstractRequest> TAG = ClassTag$.MODULE$.apply(AbstractRequest.class);
    }

    @Override
    public int processorOf(Object request) {
        return ((RequestChannel.Request) request).processor();
    }

    @Override
    public RequestContext contextOf(Object request) {
        return ((RequestChannel.Request) request).context();
    }

    @Override
    public AbstractRequest bodyOf(Object request) {
        return ((RequestChannel.Request) request).body(AnyRequest.TAG);
    }

    @Override
    public int sizeInBytesOf(Object request) {
        return ((RequestChannel.Request) request).sizeInBytes();
    }

    @Override
    public void sendRequest(RequestChannel channel, Object request) {
        channel.sendRequest((RequestChannel.Request) request);
    }

    @Override
    public Object requestOf(Object response) {
        return ((RequestChannel.Response) response).request();
    }

    @Override
    public ResponseKind kindOf(Object response) {
        if (response instanceof RequestChannel.SendResponse) {
            return ResponseKind.SEND;
        } else if (response instanceof RequestChannel.NoOpResponse) {
            return ResponseKind.NO_OP;
        } else if (response instanceof RequestChannel.CloseConnectionResponse) {
            return ResponseKind.CLOSE_CONNECTION;
        } else if (response instanceof RequestChannel.StartThrottlingResponse) {
            return ResponseKind.START_THROTTLING;
        } else if (response instanceof RequestChannel.EndThrottlingResponse) {
            return ResponseKind.END_THROTTLING;
        }
        throw new IllegalArgumentException(
                "kpipe: unknown response type " + response.getClass().getName());
    }

    @Override
    public void markDequeued(Object response, long nanoTime) {
        // Scala: request.responseDequeueTimeNanos = nanoTime
        ((RequestChannel.Response) response).request().responseDequeueTimeNanos_$eq(nanoTime);
    }

    @Override
    public void discard(Object response) {
        // as Processor.sendResponse does for a response whose channel is gone
        RequestChannel.Response r = (RequestChannel.Response) response;
        r.request().updateRequestMetrics(0L, r);
    }
}
