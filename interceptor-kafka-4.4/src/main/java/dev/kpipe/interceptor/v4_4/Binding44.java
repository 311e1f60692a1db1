// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.spi.TopicNames;
import java.util.List;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import org.apache.kafka.metadata.KRaftMetadataCache;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;

/**
 * The binding for Kafka 4.4.x: requests and responses are the Java classes {@code org.apache.kafka.network.Request}
 * and {@code org.apache.kafka.network.Response} (kafka-server); {@code KafkaApis.handle} takes
 * {@code org.apache.kafka.server.common.RequestLocal}, the metadata cache is {@code org.apache.kafka.metadata.MetadataCache}
 * and the produce purgatory {@code org.apache.kafka.server.purgatory.DelayedOperationPurgatory}, as in 4.1–4.3.
 * Compiled against 4.4.0. Immutable.
 */
public final class Binding44 extends KafkaBinding {

    static final String REQUEST = "org.apache.kafka.network.Request";
    static final String RESPONSE = "org.apache.kafka.network.Response";
    static final String REQUEST_LOCAL = "org.apache.kafka.server.common.RequestLocal";

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding44() {
        super("4.4", REQUEST, RESPONSE, REQUEST_LOCAL);
    }

    @Override
    protected List<HookPoint> versionHookPoints() {
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
                HookPoint.method("org.apache.kafka.network.EndThrottlingResponse", "request"),
                HookPoint.method("org.apache.kafka.metadata.MetadataCache", "getTopicName", UUID),
                HookPoint.method("org.apache.kafka.server.purgatory.DelayedOperationPurgatory", "numDelayed"));
    }

    @Override
    protected HookPoint transactionVerification() {
        return ADD_OR_VERIFY_TRANSACTION_4_1;
    }

    @Override
    protected HookPoint partitionVerification() {
        return PARTITION_VERIFICATION_4_1;
    }

    @Override
    protected HookPoint callbackCompletion() {
        return HookPoint.method(REQUEST, "callbackRequestCompleteTimeNanos", "java.util.OptionalLong");
    }

    @Override
    protected RequestModel createModel() {
        return new RequestModel44();
    }

    @Override
    protected TopicNames topicNames(KafkaApis apis) {
        MetadataCache cache = apis.metadataCache();
        if (cache instanceof KRaftMetadataCache kraft) {
            return new ImageTopicNames(kraft);
        }
        return id -> cache.getTopicName(id).orElse(null);
    }

    @Override
    protected IntSupplier delayedProduceRequests(KafkaApis apis) {
        DelayedOperationPurgatory<?> purgatory = apis.replicaManager().delayedProducePurgatory();
        return purgatory::numDelayed;
    }
}
