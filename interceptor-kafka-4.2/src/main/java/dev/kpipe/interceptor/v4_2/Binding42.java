package dev.kpipe.interceptor.v4_2;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.RequestModel;
import java.util.List;

/**
 * The binding for Kafka 4.2.x and 4.3.x: requests and responses are the Scala classes
 * {@code kafka.network.RequestChannel$Request} and {@code kafka.network.RequestChannel$Response} (kafka_2.13), and
 * {@code RequestChannel.sendRequest}, {@code KafkaApis.handle} and {@code Processor.updateRequestMetrics} take them.
 * Every other hooked member is the same as in 4.4 ({@link KafkaBinding}). Immutable.
 */
public final class Binding42 extends KafkaBinding {

    static final String REQUEST = "kafka.network.RequestChannel$Request";
    static final String RESPONSE = "kafka.network.RequestChannel$Response";

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding42() {
        super("4.2-4.3", REQUEST, RESPONSE);
    }

    @Override
    protected List<HookPoint> modelHookPoints() {
        return List.of(
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
            HookPoint.type("kafka.network.RequestChannel$EndThrottlingResponse"));
    }

    @Override
    protected RequestModel createModel() {
        return new RequestModel42();
    }
}
