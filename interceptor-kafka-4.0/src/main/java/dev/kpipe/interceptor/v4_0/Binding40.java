// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_0;

import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.KafkaLine;
import dev.kpipe.interceptor.v3_8.RequestModel38;
import dev.kpipe.spi.TopicNames;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import kafka.server.MetadataCache;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;
import scala.Option;

/**
 * The binding for Kafka 4.0.x (KRaft only): the Scala request model ({@link RequestModel38}) and metadata cache (as in
 * 3.x), with {@code org.apache.kafka.server.common.RequestLocal} and the Java purgatory (as in 4.1+), and the Scala
 * transaction verification renamed {@code addOrVerifyTransaction}. No other line has this combination; compiled
 * against 4.0.2. Immutable.
 */
public final class Binding40 extends KafkaBinding {

    /** Kafka 4.0's names. */
    static final KafkaLine LINE = new KafkaLine(
            "4.0",
            RequestModel38.REQUESTS,
            "org.apache.kafka.server.common.RequestLocal",
            "kafka.server.MetadataCache",
            "org.apache.kafka.server.purgatory.DelayedOperationPurgatory",
            KafkaLine.TransactionVerification.SCALA_4_0);

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding40() {
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
