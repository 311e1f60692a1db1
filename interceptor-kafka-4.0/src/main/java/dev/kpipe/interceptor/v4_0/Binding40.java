// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_0;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.interceptor.v3_8.RequestModel38;
import dev.kpipe.spi.TopicNames;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import kafka.server.MetadataCache;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;
import scala.Option;

/**
 * The binding for Kafka 4.0.x (KRaft only): requests and responses are the Scala classes
 * {@code kafka.network.RequestChannel$Request} and {@code $Response} ({@link RequestModel38}); {@code KafkaApis.handle}
 * takes {@code org.apache.kafka.server.common.RequestLocal} (as from 4.0 on); {@code KafkaApis.metadataCache()} is
 * still the Scala trait {@code kafka.server.MetadataCache} ({@code Option<String> getTopicName(Uuid)}, as in 3.x); the
 * produce purgatory is the Java {@code org.apache.kafka.server.purgatory.DelayedOperationPurgatory} (as in 4.1+). No
 * other line has this combination; compiled against 4.0.2. Immutable.
 */
public final class Binding40 extends KafkaBinding {

    static final String REQUEST_LOCAL = "org.apache.kafka.server.common.RequestLocal";

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding40() {
        super("4.0", RequestModel38.REQUEST, RequestModel38.RESPONSE, REQUEST_LOCAL);
    }

    @Override
    protected List<HookPoint> versionHookPoints() {
        List<HookPoint> points = new ArrayList<>(RequestModel38.hookPoints());
        points.add(HookPoint.method("kafka.server.MetadataCache", "getTopicName", UUID));
        points.add(HookPoint.method("org.apache.kafka.server.purgatory.DelayedOperationPurgatory", "numDelayed"));
        return points;
    }

    @Override
    protected HookPoint transactionVerification() {
        return HookPoint.method(
                "kafka.server.AddPartitionsToTxnManager",
                "addOrVerifyTransaction",
                String.class.getName(),
                "long",
                "short",
                "scala.collection.Seq",
                "scala.Function1",
                "kafka.server.TransactionSupportedOperation");
    }

    @Override
    protected HookPoint partitionVerification() {
        return HookPoint.method(
                "kafka.server.ReplicaManager",
                "maybeSendPartitionToTransactionCoordinator",
                "org.apache.kafka.common.TopicPartition",
                String.class.getName(),
                "long",
                "short",
                "int",
                "scala.Function1",
                "kafka.server.TransactionSupportedOperation");
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
        return id -> {
            Option<String> name = cache.getTopicName(id);
            return name.isDefined() ? name.get() : null;
        };
    }

    @Override
    protected IntSupplier delayedProduceRequests(KafkaApis apis) {
        DelayedOperationPurgatory<?> purgatory = apis.replicaManager().delayedProducePurgatory();
        return purgatory::numDelayed;
    }
}
