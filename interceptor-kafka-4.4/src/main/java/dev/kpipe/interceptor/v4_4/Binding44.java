// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.core.KafkaLine;
import dev.kpipe.spi.TopicNames;
import java.util.function.IntSupplier;
import kafka.server.KafkaApis;
import org.apache.kafka.metadata.KRaftMetadataCache;
import org.apache.kafka.metadata.MetadataCache;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;

/**
 * The binding for Kafka 4.4.x: the Java request model ({@code org.apache.kafka.network.Request} and {@code Response},
 * kafka-server, {@link RequestModel44}); {@code RequestLocal}, metadata cache, purgatory and transaction verification
 * as in 4.1–4.3. Compiled against 4.4.0. Immutable.
 */
public final class Binding44 extends KafkaBinding {

    /** Kafka 4.4's names. */
    static final KafkaLine LINE = new KafkaLine(
            "4.4",
            RequestModel44.REQUESTS,
            "org.apache.kafka.server.common.RequestLocal",
            "org.apache.kafka.metadata.MetadataCache",
            "org.apache.kafka.server.purgatory.DelayedOperationPurgatory",
            KafkaLine.TransactionVerification.JAVA_4_1);

    /** Creates the binding; {@link dev.kpipe.interceptor.Interceptor#bindingFor} does this by class name. */
    public Binding44() {
        super(LINE);
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
