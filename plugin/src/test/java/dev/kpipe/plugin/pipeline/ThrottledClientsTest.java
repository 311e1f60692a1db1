// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.plugin.testkit.KafkaRequests;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

/**
 * {@link ThrottledClients}: a client (principal, client id) is marked by a throttle window, stays marked while a window
 * is open on one of its connections or after one left with a window open, is unmarked by a response written with no
 * window open, and the table is bounded.
 */
class ThrottledClientsTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final ThrottledClients table = new ThrottledClients(now::get);

    static RequestContext context(String connectionId, KafkaPrincipal principal, String clientId) {
        return context(KafkaRequests.metadata(connectionId, 1).context(), principal, clientId);
    }

    /** @return {@code c} with this principal and client id */
    static RequestContext context(RequestContext c, KafkaPrincipal principal, String clientId) {
        String connectionId = c.connectionId;
        RequestHeader h =
                new RequestHeader(c.header.apiKey(), c.header.apiVersion(), clientId, c.header.correlationId());
        return new RequestContext(
                h,
                connectionId,
                c.clientAddress,
                Optional.of(50_000),
                principal,
                c.listenerName,
                c.securityProtocol,
                c.clientInformation,
                false);
    }

    private static ThrottledClients.Client ctx(String clientId) {
        return new ThrottledClients.Client(KafkaPrincipal.ANONYMOUS, clientId);
    }

    private ThrottledClients.Entry probation(ThrottledClients.Client c) {
        return table.probation(c.principal(), c.clientId());
    }

    @Test
    void noClientMarkedUntilAWindowOpens() {
        assertFalse(table.anyMarked());
        assertNull(probation(ctx("a")));
    }

    @Test
    void aWindowMarksTheClientOnlyAndAnUnthrottledResponseUnmarksIt() {
        ThrottledClients.Entry a = table.windowOpened(ctx("a"));
        assertTrue(a.marked());
        assertSame(a, probation(ctx("a")), "a new connection of the client is on probation");
        assertNull(probation(ctx("b")), "another client id is not");
        assertNull(
                table.probation(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "alice"), "a"),
                "the same client id of another principal is not");
        table.responseUnthrottled(a);
        assertTrue(a.marked(), "a window is still open on one of its connections");
        table.windowClosed(a);
        assertTrue(a.marked(), "a closed window leaves it marked");
        table.responseUnthrottled(a);
        assertFalse(a.marked());
        assertEquals(0, table.size());
        assertNull(probation(ctx("a")));
    }

    @Test
    void aConnectionThatLeftWithAWindowOpenLeavesItsClientMarked() {
        ThrottledClients.Entry first = table.windowOpened(ctx("a"));
        ThrottledClients.Entry second = table.windowOpened(ctx("a"));
        assertSame(first, second, "one entry per client");
        table.windowClosed(first); // one connection closed with its window open
        table.responseUnthrottled(first);
        assertTrue(first.marked(), "the other connection still has a window open");
        table.windowClosed(first); // the other closed too
        assertTrue(first.marked());
        assertSame(first, probation(ctx("a")));
        table.responseUnthrottled(first);
        assertFalse(first.marked());
        ThrottledClients.Entry again = table.windowOpened(ctx("a"));
        assertTrue(again.marked(), "marked anew by a new window");
        assertEquals(1, table.size());
    }

    @Test
    void boundedAndAClientThatNeverCameBackExpires() {
        for (int i = 0; i < ThrottledClients.MAX_CLIENTS; i++) {
            table.windowClosed(table.windowOpened(ctx("c" + i)));
        }
        assertEquals(ThrottledClients.MAX_CLIENTS, table.size());
        assertNull(table.windowOpened(ctx("late")), "a full table marks no new client");
        assertNotNull(probation(ctx("c0")));
        now.addAndGet(ThrottledClients.EXPIRY_NANOS);
        ThrottledClients.Entry late = table.windowOpened(ctx("late"));
        assertNotNull(late, "expired entries made room");
        assertEquals(1, table.size());
        assertNull(probation(ctx("c0")), "no window for the expiry: not marked any more");
    }
}
