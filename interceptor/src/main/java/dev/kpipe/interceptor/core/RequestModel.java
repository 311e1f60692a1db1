// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.core;

import dev.kpipe.spi.ResponseKind;
import kafka.network.RequestChannel;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestContext;

/**
 * The Kafka-version-specific half of a binding: how to read and act on the broker's request and response objects,
 * whose classes differ between version lines (Scala {@code kafka.network.RequestChannel$Request} and
 * {@code $Response} up to 4.3, Java {@code org.apache.kafka.network.Request} and {@code Response} from 4.4). The
 * version-independent half ({@link Hooks}, {@link KafkaNetworkProcessor}) passes them as opaque {@code Object} handles.
 *
 * <p>Implementations are stateless and thread-safe; each method is one or two direct calls on the broker's objects
 * (no reflection on the hot path). Every method may throw if given an object of another type; the callers in
 * {@link Hooks} catch and count that.
 */
public interface RequestModel {

    /**
     * @param request a request handle
     * @return the id of the network processor that read it ({@code Request.processor})
     */
    int processorOf(Object request);

    /**
     * @param request a request handle
     * @return its context ({@code Request.context})
     */
    RequestContext contextOf(Object request);

    /**
     * @param request a request handle
     * @return its parsed body ({@code Request.body})
     */
    AbstractRequest bodyOf(Object request);

    /**
     * @param request a request handle
     * @return its size on the wire, header included, in bytes ({@code Request.sizeInBytes})
     */
    int sizeInBytesOf(Object request);

    /**
     * Queues the request for the request handlers: {@code RequestChannel.sendRequest(request)}. Thread: the network
     * thread of the processor that read it.
     *
     * @param channel the broker's request channel
     * @param request a request handle
     */
    void sendRequest(RequestChannel channel, Object request);

    /**
     * @param response a response handle
     * @return the request it answers ({@code Response.request})
     */
    Object requestOf(Object response);

    /**
     * @param response a response handle
     * @return its kind, from its class
     * @throws IllegalArgumentException for a response class the binding does not know
     */
    ResponseKind kindOf(Object response);

    /**
     * Records when the response left the response queue, as {@code Processor.dequeueResponse} does.
     *
     * @param response a response handle
     * @param nanoTime {@link System#nanoTime()} now
     */
    void markDequeued(Object response, long nanoTime);

    /**
     * Completes the request metrics of a response that is not sent because its connection is gone, as
     * {@code Processor.sendResponse} does for such a response (network thread time 0).
     *
     * @param response a response handle
     */
    void discard(Object response);
}
