// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.ResponseKind;
import java.net.InetAddress;
import java.util.EnumSet;
import java.util.Optional;
import kafka.network.RequestChannel;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.network.CloseConnectionResponse;
import org.apache.kafka.network.EndThrottlingResponse;
import org.apache.kafka.network.NoOpResponse;
import org.apache.kafka.network.Request;
import org.apache.kafka.network.SendResponse;
import org.apache.kafka.network.StartThrottlingResponse;
import org.apache.kafka.network.metrics.RequestChannelMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link RequestModel44} on real Kafka 4.4 request, response and request channel objects. */
class RequestModel44Test {

    private final RequestModel44 model = new RequestModel44();
    private final RequestChannelMetrics metrics = new RequestChannelMetrics(EnumSet.of(ApiKeys.API_VERSIONS));
    private final RequestContext context = new RequestContext(
            new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "client", 42),
            "conn-1",
            InetAddress.getLoopbackAddress(),
            KafkaPrincipal.ANONYMOUS,
            new ListenerName("PLAINTEXT"),
            SecurityProtocol.PLAINTEXT,
            ClientInformation.EMPTY,
            false);
    private final Request request = new Request(
            3,
            context,
            System.nanoTime(),
            MemoryPool.NONE,
            new ApiVersionsRequest.Builder().build((short) 3).serialize().buffer(),
            metrics);

    @AfterEach
    void closeMetrics() {
        metrics.close();
    }

    @Test
    void readsTheRequest() {
        assertEquals(3, model.processorOf(request));
        assertSame(context, model.contextOf(request));
        assertInstanceOf(ApiVersionsRequest.class, model.bodyOf(request));
        assertEquals(request.sizeInBytes(), model.sizeInBytesOf(request));
        assertTrue(model.sizeInBytesOf(request) > 0);
    }

    @Test
    void knowsEveryResponseKindAndItsRequest() {
        Send send = new org.apache.kafka.common.network.ByteBufferSend(java.nio.ByteBuffer.allocate(1));
        assertEquals(ResponseKind.SEND, model.kindOf(new SendResponse(request, send, Optional.empty())));
        assertEquals(ResponseKind.NO_OP, model.kindOf(new NoOpResponse(request)));
        assertEquals(ResponseKind.CLOSE_CONNECTION, model.kindOf(new CloseConnectionResponse(request)));
        assertEquals(ResponseKind.START_THROTTLING, model.kindOf(new StartThrottlingResponse(request)));
        assertEquals(ResponseKind.END_THROTTLING, model.kindOf(new EndThrottlingResponse(request)));
        assertThrows(IllegalArgumentException.class, () -> model.kindOf("not a response"));
        assertSame(request, model.requestOf(new NoOpResponse(request)));
    }

    @Test
    void marksTheDequeueTimeAndCompletesMetricsOfADiscardedResponse() throws Exception {
        NoOpResponse response = new NoOpResponse(request);
        model.markDequeued(response, 12345L);
        java.lang.reflect.Field dequeued = Request.class.getDeclaredField("responseDequeueTimeNanos"); // no getter
        dequeued.setAccessible(true);
        assertEquals(12345L, dequeued.getLong(request));
        model.discard(response); // Request.updateRequestMetrics(0, responseLog): must not throw
    }

    @Test
    void sendRequestQueuesItForTheHandlers() throws Exception {
        RequestChannel channel = new RequestChannel(10, Time.SYSTEM, metrics);
        model.sendRequest(channel, request);
        assertSame(request, channel.receiveRequest(1000L));
    }
}
