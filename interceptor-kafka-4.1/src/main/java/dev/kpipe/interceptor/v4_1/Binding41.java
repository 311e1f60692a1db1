// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_1;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.interceptor.v3_8.RequestModel38;
import dev.kpipe.spi.TopicNames;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;

/**
 * The binding for Kafka 4.1.x, 4.2.x and 4.3.x: requests and responses are the Scala classes
 * {@code kafka.network.RequestChannel$Request} and {@code $Response} (kafka_2.13, {@link RequestModel38});
 * {@code KafkaApis.handle} takes {@code org.apache.kafka.server.common.RequestLocal}; {@code KafkaApis.metadataCache()}
 * is the Java {@code org.apache.kafka.metadata.MetadataCache} ({@code Optional<String> getTopicName(Uuid)}, new in
 * 4.1); the produce purgatory is the Java {@code org.apache.kafka.server.purgatory.DelayedOperationPurgatory}. Every
 * hooked member has the same descriptor in 4.1.2, 4.2.1 and 4.3.1 ({@code javap -p}); compiled against 4.1.2.
 * Immutable.
 */
public final class Binding41 extends KafkaBinding {

    static final String REQUEST_LOCAL = "org.apache.kafka.server.common.RequestLocal";

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding41() {
        super("4.1-4.3", RequestModel38.REQUEST, RequestModel38.RESPONSE, REQUEST_LOCAL);
    }

    @Override
    protected List<HookPoint> versionHookPoints() {
        List<HookPoint> points = new ArrayList<>(RequestModel38.hookPoints());
        points.add(HookPoint.method("org.apache.kafka.metadata.MetadataCache", "getTopicName", UUID));
        points.add(HookPoint.method("org.apache.kafka.server.purgatory.DelayedOperationPurgatory", "numDelayed"));
        return points;
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
        return HookPoint.method(RequestModel38.REQUEST, "callbackRequestCompleteTimeNanos_$eq", "scala.Option");
    }

    @Override
    protected RequestModel createModel() {
        return new RequestModel38();
    }

    @Override
    protected TopicNames topicNames(KafkaApis apis) {
        MetadataCache cache = apis.metadataCache();
        return id -> cache.getTopicName(id).orElse(null);
    }

    @Override
    protected IntSupplier delayedProduceRequests(KafkaApis apis) {
        DelayedOperationPurgatory<?> purgatory = apis.replicaManager().delayedProducePurgatory();
        return purgatory::numDelayed;
    }
}
