package dev.kpipe.interceptor.core;

import dev.kpipe.spi.BrokerLoad;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ArrayBlockingQueue;
import kafka.network.RequestChannel;
import kafka.server.KafkaApis;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;

/**
 * {@link BrokerLoad} over a broker's request channel and produce purgatory. The members it uses
 * ({@code KafkaApis.requestChannel/replicaManager}, {@code RequestChannel.requestQueue/queueSize},
 * {@code ReplicaManager.delayedProducePurgatory}, {@code DelayedOperationPurgatory.numDelayed}) have the same erased
 * signatures in Kafka 4.2 to 4.4. Thread: any.
 */
final class KafkaBrokerLoad implements BrokerLoad {
    private final ArrayBlockingQueue<?> requestQueue;
    private final int capacity;
    private final DelayedOperationPurgatory<?> producePurgatory;

    KafkaBrokerLoad(KafkaApis apis) {
        RequestChannel channel = apis.requestChannel();
        try {
            this.requestQueue = (ArrayBlockingQueue<?>) MethodHandles.privateLookupIn(RequestChannel.class,
                    MethodHandles.lookup())
                .findVirtual(RequestChannel.class, "requestQueue", MethodType.methodType(ArrayBlockingQueue.class))
                .invoke(channel);
        } catch (Throwable t) {
            throw new IllegalStateException("kpipe: cannot read the request queue", t);
        }
        this.capacity = channel.queueSize();
        this.producePurgatory = apis.replicaManager().delayedProducePurgatory();
    }

    @Override
    public int requestQueueSize() {
        return requestQueue.size();
    }

    @Override
    public int requestQueueCapacity() {
        return capacity;
    }

    @Override
    public int delayedProduceRequests() {
        return producePurgatory.numDelayed();
    }
}
