// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.backpressure.InflightLimits;
import dev.kpipe.plugin.classify.RequestClassifier;
import dev.kpipe.plugin.classify.TopicPolicy;
import dev.kpipe.plugin.pipeline.ConnectionSnapshot;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pipeline.WaitReason;
import dev.kpipe.plugin.pipeline.WakeupTimer;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.ReflectionException;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/** {@link ConnectionDump}: the format of the connection dump and its bound, without a broker. */
class ConnectionDumpTest {

    private static ConnectionSnapshot conn(String id, long oldestMs, Set<WaitReason> reasons) {
        return new ConnectionSnapshot(
                id,
                "PLAINTEXT",
                "User:ANONYMOUS",
                "producer-1",
                "apache-kafka-java",
                "4.4.0",
                "PIPELINED",
                8,
                1234,
                4,
                oldestMs < 0 ? -1 : oldestMs * 1_000_000,
                5_000_000_000L,
                reasons);
    }

    @Test
    void oneLinePerConnectionWithEveryField() {
        String dump = ConnectionDump.format(
                List.of(conn(
                        "127.0.0.1:9092-127.0.0.1:50000-0",
                        512,
                        EnumSet.of(WaitReason.THROTTLED, WaitReason.AWAITING_DISPATCH))),
                100);
        assertEquals(
                "kpipe connections: 1 pipelined, 1 listed (at most 100, oldest request in flight first)\n"
                        + "connection=127.0.0.1:9092-127.0.0.1:50000-0 listener=PLAINTEXT principal=User:ANONYMOUS"
                        + " client.id=producer-1 client.software=apache-kafka-java/4.4.0 state=PIPELINED inflight.requests=8"
                        + " inflight.bytes=1234 held.responses=4 oldest.inflight.ms=512 pipelined.ms=5000"
                        + " waiting=awaiting-dispatch,throttled\n",
                dump);
    }

    @Test
    void readingAndUnknownValues() {
        ConnectionSnapshot s = new ConnectionSnapshot(
                "c-1", null, null, null, null, null, "PIPELINED", 0, 0, 0, -1, 7_000_000, Set.of());
        assertEquals(
                "kpipe connections: 1 pipelined, 1 listed (at most 100, oldest request in flight first)\n"
                        + "connection=c-1 listener=- principal=- client.id=- client.software=- state=PIPELINED inflight.requests=0"
                        + " inflight.bytes=0 held.responses=0 oldest.inflight.ms=- pipelined.ms=7 waiting=reading\n",
                ConnectionDump.format(List.of(s), 100));
    }

    @Test
    void valuesWithSpacesQuotesOrControlCharactersAreQuotedAndBounded() {
        ConnectionSnapshot s = new ConnectionSnapshot(
                "c-1",
                "SASL_SSL",
                "User:CN=app, O=Acme",
                "my \"client\"\n",
                "",
                "1",
                "DRAINING",
                1,
                1,
                0,
                3_000_000,
                4_000_000,
                Set.of(WaitReason.DRAIN_EXCLUSIVE));
        String line = ConnectionDump.format(List.of(s), 100).split("\n")[1];
        assertTrue(line.contains(" principal=\"User:CN=app, O=Acme\" "), line);
        assertTrue(line.contains(" client.id=\"my \\\"client\\\"?\" "), line);
        assertTrue(line.contains(" client.software=/1 "), line);
        assertTrue(line.endsWith(" waiting=drain-exclusive"), line);

        String longId = "x".repeat(5_000);
        String bounded = ConnectionDump.format(
                List.of(new ConnectionSnapshot(
                        "c-2", "L", "P", longId, "n", "v", "PIPELINED", 0, 0, 0, -1, 0, Set.of())),
                100);
        assertTrue(bounded.contains(" client.id=" + "x".repeat(ConnectionDump.MAX_VALUE_CHARS) + "... "), bounded);
    }

    @Test
    void listsTheOldestFirstUpToTheLimitAndSaysHowManyWereLeftOut() {
        List<ConnectionSnapshot> all = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            all.add(conn("c-" + i, i % 50 == 0 ? -1 : i, Set.of()));
        }
        String dump = ConnectionDump.format(all, ConnectionDump.MAX_CONNECTIONS);
        String[] lines = dump.split("\n");
        assertEquals(1 + ConnectionDump.MAX_CONNECTIONS + 1, lines.length);
        assertEquals(
                "kpipe connections: 250 pipelined, 100 listed (at most 100, oldest request in flight first)", lines[0]);
        assertTrue(lines[1].startsWith("connection=c-249 "), lines[1]);
        assertTrue(lines[1].contains(" oldest.inflight.ms=249 "), lines[1]);
        assertTrue(
                lines[100].startsWith("connection=c-148 "),
                "the 100th oldest (249..148 less 200 and 150): " + lines[100]);
        assertEquals("... 150 more connections not listed", lines[101]);
        assertTrue(dump.length() < 100 * 400, "bounded: " + dump.length() + " chars");
    }

    @Test
    void theMBeanDeclaresOneStringAttributeComputedOnRead() throws Exception {
        PipelineCoordinator coordinator = new PipelineCoordinator(
                new RequestClassifier(new TopicPolicy(java.util.regex.Pattern.compile(".*"), null)),
                new InflightLimits(5, 1 << 20),
                dev.kpipe.backpressure.ByteBudget.unbounded(dev.kpipe.backpressure.Ticker.SYSTEM),
                new PipelineStats(),
                dev.kpipe.backpressure.Ticker.SYSTEM,
                WakeupTimer.daemon());
        KpipeConnections mbean = new KpipeConnections(coordinator, 100);
        assertTrue(mbean.register());
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName("kafka.server:type=kpipe-connections");
            MBeanAttributeInfo[] attrs = server.getMBeanInfo(name).getAttributes();
            assertEquals(1, attrs.length);
            assertEquals("connection-dump", attrs[0].getName());
            assertEquals(String.class.getName(), attrs[0].getType());
            assertEquals(
                    "kpipe connections: 0 pipelined, 0 listed (at most 100, oldest request in flight first)\n",
                    server.getAttribute(name, "connection-dump"));
            assertEquals(server.getAttribute(name, "connection-dump"), ConnectionDump.of(coordinator));
        } finally {
            mbean.unregister();
        }
        assertFalse(ManagementFactory.getPlatformMBeanServer()
                .isRegistered(new ObjectName("kafka.server:type=kpipe-connections")));
    }

    @Test
    void aCutNeverSplitsAnEscapeAndEveryLineIsBounded() {
        // 1 + 99 escaped quotes = 199 characters: the 100th quote (2 more) does not fit, so the cut comes before it.
        String quotes = "a" + "\"".repeat(300);
        String line = ConnectionDump.format(
                        List.of(new ConnectionSnapshot(
                                "c-1", "L", "P", quotes, "n", "v", "PIPELINED", 0, 0, 0, -1, 0, Set.of())),
                        100)
                .split("\n")[1];
        assertTrue(line.contains(" client.id=\"a" + "\\\"".repeat(99) + "...\" "), line);

        // Exactly MAX_VALUE_CHARS once escaped: not cut.
        String exact = "\\".repeat(ConnectionDump.MAX_VALUE_CHARS / 2);
        line = ConnectionDump.format(
                        List.of(new ConnectionSnapshot(
                                "c-1", "L", "P", exact, "n", "v", "PIPELINED", 0, 0, 0, -1, 0, Set.of())),
                        100)
                .split("\n")[1];
        assertTrue(line.contains(" client.id=\"" + "\\\\".repeat(ConnectionDump.MAX_VALUE_CHARS / 2) + "\" "), line);

        // A surrogate pair is kept whole: 199 x's and a pair (2 chars) would make 201.
        String emoji = "x".repeat(ConnectionDump.MAX_VALUE_CHARS - 1) + "\uD83D\uDE00";
        line = ConnectionDump.format(
                        List.of(new ConnectionSnapshot(
                                "c-1", "L", "P", emoji, "n", "v", "PIPELINED", 0, 0, 0, -1, 0, Set.of())),
                        100)
                .split("\n")[1];
        assertTrue(line.contains(" client.id=" + "x".repeat(ConnectionDump.MAX_VALUE_CHARS - 1) + "... "), line);

        // The worst case: every text value long and all escapes, the numbers at their widest, every wait reason.
        String worst = "\"".repeat(5_000);
        ConnectionSnapshot s = new ConnectionSnapshot(
                worst,
                worst,
                worst,
                worst,
                worst,
                worst,
                worst,
                Integer.MIN_VALUE,
                Long.MIN_VALUE,
                Integer.MIN_VALUE,
                Long.MAX_VALUE,
                Long.MIN_VALUE,
                EnumSet.allOf(WaitReason.class));
        String dump = ConnectionDump.format(List.of(s), 100);
        String worstLine = dump.substring(dump.indexOf('\n') + 1);
        assertTrue(worstLine.length() <= ConnectionDump.MAX_LINE_CHARS, worstLine.length() + " characters");
        assertTrue(
                worstLine.length() > ConnectionDump.MAX_LINE_CHARS - 200, "the bound is tight: " + worstLine.length());
        String cut = "=\"" + "\\\"".repeat(ConnectionDump.MAX_VALUE_CHARS / 2) + "...\"";
        for (String field : List.of("connection", "listener", "principal", "client.id", "client.software", "state")) {
            assertTrue(worstLine.contains(field + cut + " "), field);
        }
    }

    @Test
    void aFailedDumpIsLoggedAtWarnOnceThenAtDebugAndReturnedAsText() {
        List<String> logged = new ArrayList<>();
        Logger log = (Logger) Proxy.newProxyInstance(
                Logger.class.getClassLoader(), new Class<?>[] {Logger.class}, (proxy, method, args) -> {
                    if (method.getName().equals("warn") || method.getName().equals("debug")) {
                        logged.add(method.getName() + ": " + args[0]);
                    }
                    return method.getReturnType() == boolean.class ? Boolean.TRUE : null;
                });
        KpipeConnections mbean = new KpipeConnections(
                () -> {
                    throw new IllegalStateException("broken");
                },
                100,
                log);
        for (int i = 0; i < 3; i++) {
            assertEquals("kpipe connections: dump failed: java.lang.IllegalStateException: broken\n", mbean.dump());
        }
        assertEquals(
                List.of(
                        "warn: kpipe: failed to build the connection dump (further failures are logged at DEBUG)",
                        "debug: kpipe: failed to build the connection dump",
                        "debug: kpipe: failed to build the connection dump"),
                logged);
    }

    @Test
    void aVirtualMachineErrorIsNeverTurnedIntoADump() {
        KpipeConnections mbean = new KpipeConnections(
                () -> {
                    throw new StackOverflowError("deep");
                },
                100,
                org.slf4j.LoggerFactory.getLogger("test"));
        StackOverflowError e = assertThrows(StackOverflowError.class, mbean::dump);
        assertEquals("deep", e.getMessage());
    }

    @Test
    void invokeThrowsReflectionExceptionAsJmxExpects() throws Exception {
        KpipeConnections mbean = new KpipeConnections(List::of, 100, org.slf4j.LoggerFactory.getLogger("test"));
        assertTrue(mbean.register());
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ReflectionException e = assertThrows(
                    ReflectionException.class,
                    () -> server.invoke(new ObjectName(KpipeConnections.MBEAN), "reset", new Object[0], new String[0]));
            assertTrue(e.getTargetException() instanceof NoSuchMethodException, e.toString());
        } finally {
            mbean.unregister();
        }
    }

    @Test
    void anOldRuntimeDoesNotUnregisterTheMBeanThatReplacedIt() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName(KpipeConnections.MBEAN);
        KpipeConnections old = new KpipeConnections(List::of, 100, org.slf4j.LoggerFactory.getLogger("test"));
        KpipeConnections replacing = new KpipeConnections(List::of, 7, org.slf4j.LoggerFactory.getLogger("test"));
        assertTrue(old.register());
        assertTrue(old.isRegistered());
        assertTrue(replacing.register());
        try {
            assertFalse(old.isRegistered(), "replaced");
            old.unregister();
            assertTrue(server.isRegistered(name), "the old runtime left the replacing one's MBean alone");
            assertTrue(replacing.isRegistered());
            assertTrue(((String) server.getAttribute(name, KpipeConnections.ATTRIBUTE)).contains("(at most 7,"));
        } finally {
            replacing.unregister();
        }
        assertFalse(server.isRegistered(name));
        assertFalse(replacing.isRegistered());
    }

    @Test
    void noConnections() {
        assertEquals(
                "kpipe connections: 0 pipelined, 0 listed (at most 100, oldest request in flight first)\n",
                ConnectionDump.format(List.of(), 100));
    }
}
