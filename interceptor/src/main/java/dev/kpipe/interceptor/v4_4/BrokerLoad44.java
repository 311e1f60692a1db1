package dev.kpipe.interceptor.v4_4;

import dev.kpipe.spi.BrokerLoad;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ArrayBlockingQueue;
import kafka.network.RequestChannel;
import kafka.server.KafkaApis;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;

/** {@link BrokerLoad} over a Kafka 4.4 broker's request channel and produce purgatory. */
final class BrokerLoad44 implements BrokerLoad {
    private final ArrayBlockingQueue<?> requestQueue;
    private final int capacity;
    private final DelayedOperationPurgatory<?> producePurgatory;

    BrokerLoad44(KafkaApis apis) {
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
