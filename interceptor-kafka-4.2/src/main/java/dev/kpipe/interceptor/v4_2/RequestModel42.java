package dev.kpipe.interceptor.v4_2;

import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.spi.ResponseKind;
import kafka.network.RequestChannel;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * {@link RequestModel} over Kafka 4.2/4.3's Scala {@code RequestChannel.Request} and {@code RequestChannel.Response}.
 * Stateless.
 */
final class RequestModel42 implements RequestModel {

    /**
     * {@code Request.body} is {@code body[T <: AbstractRequest](implicit ClassTag[T])}: with {@code AbstractRequest} it
     * returns the parsed body as is ({@code loggableRequest} would copy and redact some request types).
     */
    private static final ClassTag<AbstractRequest> ANY_REQUEST = ClassTag$.MODULE$.apply(AbstractRequest.class);

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
        return ((RequestChannel.Request) request).body(ANY_REQUEST);
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
        throw new IllegalArgumentException("kpipe: unknown response type " + response.getClass().getName());
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
