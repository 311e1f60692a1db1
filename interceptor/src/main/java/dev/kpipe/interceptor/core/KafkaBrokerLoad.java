// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.spi.BrokerLoad;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.function.IntSupplier;
import kafka.network.RequestChannel;
import kafka.server.KafkaApis;

/**
 * {@link BrokerLoad} over a broker's request channel and produce purgatory. The members it uses
 * ({@code KafkaApis.requestChannel}, {@code RequestChannel.requestQueue/queueSize})
 * have the same erased signatures in Kafka 3.8 to 4.4; the produce purgatory's type differs, so its size comes from
 * the binding ({@link KafkaBinding#delayedProduceRequests}). Thread: any.
 */
final class KafkaBrokerLoad implements BrokerLoad {
    private final ArrayBlockingQueue<?> requestQueue;
    private final int capacity;
    private final IntSupplier delayedProduce;

    KafkaBrokerLoad(KafkaApis apis, IntSupplier delayedProduce) {
        RequestChannel channel = apis.requestChannel();
        try {
            this.requestQueue = (ArrayBlockingQueue<?>) MethodHandles.privateLookupIn(
                            RequestChannel.class, MethodHandles.lookup())
                    .findVirtual(RequestChannel.class, "requestQueue", MethodType.methodType(ArrayBlockingQueue.class))
                    .invoke(channel);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("kpipe: cannot read the request queue", t);
        }
        this.capacity = channel.queueSize();
        this.delayedProduce = delayedProduce;
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
        return delayedProduce.getAsInt();
    }
}
