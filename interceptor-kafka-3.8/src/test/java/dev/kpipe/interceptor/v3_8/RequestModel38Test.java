// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v3_8;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.ResponseKind;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import kafka.network.RequestChannel;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.network.ByteBufferSend;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * {@link RequestModel38} on real Kafka 3.8 (Scala) request, response and request channel objects (the 4.0 and 4.1
 * modules run the same model against their own lines' jars in their binding tests' linkage).
 */
class RequestModel38Test {

    private final RequestModel38 model = new RequestModel38();
    private final RequestChannel.Metrics metrics = new RequestChannel.Metrics(ApiMessageType.ListenerType.BROKER);
    private final RequestContext context = new RequestContext(
            new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "client", 42),
            "conn-1",
            InetAddress.getLoopbackAddress(),
            KafkaPrincipal.ANONYMOUS,
            new ListenerName("PLAINTEXT"),
            SecurityProtocol.PLAINTEXT,
            ClientInformation.EMPTY,
            false);
    private final RequestChannel.Request request = new RequestChannel.Request(
            3,
            context,
            System.nanoTime(),
            MemoryPool.NONE,
            new ApiVersionsRequest.Builder().build((short) 3).serialize(),
            metrics,
            Option.empty());

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
        ByteBufferSend send = new ByteBufferSend(ByteBuffer.allocate(1));
        assertEquals(
                ResponseKind.SEND,
                model.kindOf(new RequestChannel.SendResponse(request, send, Option.empty(), Option.empty())));
        assertEquals(ResponseKind.NO_OP, model.kindOf(new RequestChannel.NoOpResponse(request)));
        assertEquals(ResponseKind.CLOSE_CONNECTION, model.kindOf(new RequestChannel.CloseConnectionResponse(request)));
        assertEquals(ResponseKind.START_THROTTLING, model.kindOf(new RequestChannel.StartThrottlingResponse(request)));
        assertEquals(ResponseKind.END_THROTTLING, model.kindOf(new RequestChannel.EndThrottlingResponse(request)));
        assertThrows(IllegalArgumentException.class, () -> model.kindOf("not a response"));
        assertSame(request, model.requestOf(new RequestChannel.NoOpResponse(request)));
    }

    @Test
    void marksTheDequeueTimeAndCompletesMetricsOfADiscardedResponse() {
        RequestChannel.NoOpResponse response = new RequestChannel.NoOpResponse(request);
        model.markDequeued(response, 12345L);
        assertEquals(12345L, request.responseDequeueTimeNanos());
        model.discard(response); // Request.updateRequestMetrics(0, response): must not throw
    }

    @Test
    void sendRequestQueuesItForTheHandlers() throws Exception {
        RequestChannel channel = new RequestChannel(10, "", Time.SYSTEM, metrics);
        model.sendRequest(channel, request);
        assertSame(request, channel.receiveRequest(1000L));
    }
}
