package dev.kpipe.interceptor.v4_4;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.RequestModel;
import java.util.List;

/**
 * The binding for Kafka 4.4.x: requests and responses are the Java classes {@code org.apache.kafka.network.Request}
 * and {@code org.apache.kafka.network.Response} (kafka-server). Immutable.
 */
public final class Binding44 extends KafkaBinding {

    static final String REQUEST = "org.apache.kafka.network.Request";
    static final String RESPONSE = "org.apache.kafka.network.Response";

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding44() {
        super("4.4", REQUEST, RESPONSE);
    }

    @Override
    protected List<HookPoint> modelHookPoints() {
        return List.of(
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
            HookPoint.method("org.apache.kafka.network.EndThrottlingResponse", "request"));
    }

    @Override
    protected RequestModel createModel() {
        return new RequestModel44();
    }
}
