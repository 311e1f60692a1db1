// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v3_8;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.RequestModel;
import dev.kpipe.spi.TopicNames;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import kafka.server.DelayedOperationPurgatory;
import kafka.server.KafkaApis;
import kafka.server.MetadataCache;
import scala.Option;

/**
 * The binding for Kafka 3.8.x and 3.9.x, in KRaft or ZooKeeper mode: requests and responses are the Scala classes
 * {@code kafka.network.RequestChannel$Request} and {@code $Response} ({@link RequestModel38}); {@code KafkaApis.handle}
 * takes the Scala {@code kafka.server.RequestLocal}; {@code KafkaApis.metadataCache()} is the Scala trait
 * {@code kafka.server.MetadataCache} ({@code Option<String> getTopicName(Uuid)}; {@code KRaftMetadataCache} or
 * {@code ZkMetadataCache}, so topic names come from the broker's own cache in either mode); the produce purgatory is
 * the Scala {@code kafka.server.DelayedOperationPurgatory}. Every hooked member has the same descriptor in 3.8.1 and
 * 3.9.1 ({@code javap -p}); compiled against 3.8.1. Immutable.
 */
public final class Binding38 extends KafkaBinding {

    static final String REQUEST_LOCAL = "kafka.server.RequestLocal";

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding38() {
        super("3.8-3.9", RequestModel38.REQUEST, RequestModel38.RESPONSE, REQUEST_LOCAL);
    }

    @Override
    protected List<HookPoint> versionHookPoints() {
        List<HookPoint> points = new ArrayList<>(RequestModel38.hookPoints());
        points.add(HookPoint.method("kafka.server.MetadataCache", "getTopicName", UUID));
        points.add(HookPoint.method("kafka.server.DelayedOperationPurgatory", "numDelayed"));
        return points;
    }

    @Override
    protected HookPoint transactionVerification() {
        return HookPoint.method(
                "kafka.server.AddPartitionsToTxnManager",
                "verifyTransaction",
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
                "maybeStartTransactionVerificationForPartition",
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
