// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_1;

import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.KafkaLine;
import dev.kpipe.interceptor.v3_8.RequestModel38;
import dev.kpipe.spi.TopicNames;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;

/**
 * The binding for Kafka 4.1.x, 4.2.x and 4.3.x: the Scala request model ({@link RequestModel38}) with the Java
 * {@code RequestLocal}, metadata cache ({@code Optional<String> getTopicName(Uuid)}, new in 4.1), purgatory and
 * transaction verification. Every hooked member has the same descriptor in 4.1.2, 4.2.1 and 4.3.1 ({@code javap -p});
 * compiled against 4.1.2. Immutable.
 */
public final class Binding41 extends KafkaBinding {

    /** Kafka 4.1–4.3's names. */
    static final KafkaLine LINE = new KafkaLine(
            "4.1-4.3",
            RequestModel38.REQUESTS,
            "org.apache.kafka.server.common.RequestLocal",
            "org.apache.kafka.metadata.MetadataCache",
            "org.apache.kafka.server.purgatory.DelayedOperationPurgatory",
            KafkaLine.TransactionVerification.JAVA_4_1);

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding41() {
        super(LINE);
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
