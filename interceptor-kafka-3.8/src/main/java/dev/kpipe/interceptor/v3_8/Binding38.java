// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v3_8;

import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.KafkaLine;
import dev.kpipe.spi.TopicNames;
import java.util.function.IntSupplier;
import kafka.server.DelayedOperationPurgatory;
import kafka.server.KafkaApis;
import kafka.server.MetadataCache;
import scala.Option;

/**
 * The binding for Kafka 3.8.x and 3.9.x, in KRaft or ZooKeeper mode: the Scala request model ({@link
 * RequestModel38}), the Scala {@code kafka.server.RequestLocal}, metadata cache ({@code KRaftMetadataCache} or {@code
 * ZkMetadataCache}: topic names come from the broker's own cache in either mode) and purgatory, and the Scala
 * transaction verification. Every hooked member has the same descriptor in 3.8.1 and 3.9.1 ({@code javap -p});
 * compiled against 3.8.1. Immutable.
 */
public final class Binding38 extends KafkaBinding {

    /** Kafka 3.8–3.9's names. */
    static final KafkaLine LINE = new KafkaLine(
            "3.8-3.9",
            RequestModel38.REQUESTS,
            "kafka.server.RequestLocal",
            "kafka.server.MetadataCache",
            "kafka.server.DelayedOperationPurgatory",
            KafkaLine.TransactionVerification.SCALA_3_8);

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding38() {
        super(LINE);
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
