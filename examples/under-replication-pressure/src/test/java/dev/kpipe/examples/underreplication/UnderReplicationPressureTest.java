// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.examples.underreplication;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The source against partition gauges registered as Kafka's Yammer JMX reporter registers them
 * ({@code kafka.cluster:type=Partition,name=UnderReplicated,topic=T,partition=P}, attribute {@code Value}), in a private
 * MBean server; polls driven directly, except where the poll thread itself is tested.
 */
class UnderReplicationPressureTest {

    /** A partition gauge as Kafka registers it: one attribute, {@code Value}. */
    public interface GaugeMBean {
        /** @return the value */
        Object getValue();
    }

    /** A gauge whose value the test sets, or that throws. */
    public static final class Gauge implements GaugeMBean {
        volatile int value;
        volatile boolean broken;

        Gauge(int value) {
            this.value = value;
        }

        @Override
        public Object getValue() {
            if (broken) {
                throw new IllegalStateException("gauge cannot be read");
            }
            return value;
        }
    }

    private final MBeanServer server = MBeanServerFactory.newMBeanServer();
    private final AtomicLong clock = new AtomicLong(1_000);
    private final UnderReplicationPressure source = new UnderReplicationPressure(server, clock::get, false);

    @AfterEach
    void close() {
        source.close();
    }

    private Gauge gauge(String topic, int partition, int value) throws Exception {
        Gauge g = new Gauge(value);
        server.registerMBean(
                g,
                new ObjectName("kafka.cluster:type=Partition,name=UnderReplicated,topic=" + topic + ",partition="
                        + partition));
        return g;
    }

    @Test
    void aTopicWithAnUnderReplicatedPartitionIsSaturatedAndNoOther() throws Exception {
        gauge("orders", 0, 0);
        gauge("orders", 1, 1);
        gauge("clicks", 0, 0);
        // another gauge of the partition, not followed
        server.registerMBean(
                new Gauge(1), new ObjectName("kafka.cluster:type=Partition,name=UnderMinIsr,topic=clicks,partition=0"));

        assertFalse(source.anyTopicSaturated(), "nothing before the first poll");
        source.poll();

        assertTrue(source.anyTopicSaturated());
        assertTrue(source.saturated("orders"));
        assertFalse(source.saturated("clicks"));
        assertFalse(source.saturated("unknown"));
        assertFalse(source.saturated(), "never broker-wide");
        assertArrayEquals(new String[] {"orders"}, source.getSaturatedTopics());
        assertEquals(1, source.getPolls());
        assertEquals(0, source.getClears());
    }

    @Test
    void recoveryPublishesTheClearedStateThenRunsTheListenerOnce() throws Exception {
        Gauge orders = gauge("orders", 0, 1);
        Gauge clicks = gauge("clicks", 0, 1);
        List<String> seen = new ArrayList<>();
        source.onCleared(
                () -> seen.add("orders " + source.saturated("orders") + ", clicks " + source.saturated("clicks")));
        source.poll();
        assertEquals(List.of(), seen, "no wake-up while nothing recovered");

        orders.value = 0;
        clock.set(5_000);
        source.poll();
        assertEquals(List.of("orders false, clicks true"), seen, "woken once, after the state was published");
        assertEquals(5_000, source.getLastClearedEpochMs());

        source.poll();
        assertEquals(1, seen.size(), "no wake-up for a poll without a change");

        clicks.value = 0;
        source.poll();
        assertEquals(List.of("orders false, clicks true", "orders false, clicks false"), seen);
        assertFalse(source.anyTopicSaturated());
        assertEquals(2, source.getClears());
    }

    @Test
    void aPartitionThatLeavesTheBrokerClearsItsTopic() throws Exception {
        gauge("orders", 0, 1);
        AtomicInteger wakeups = new AtomicInteger();
        source.onCleared(wakeups::incrementAndGet);
        source.poll();
        assertTrue(source.saturated("orders"));

        server.unregisterMBean(
                new ObjectName("kafka.cluster:type=Partition,name=UnderReplicated,topic=orders,partition=0"));
        source.poll();
        assertFalse(source.saturated("orders"), "a partition this broker no longer hosts holds nothing back");
        assertEquals(1, wakeups.get());
    }

    @Test
    void onlyTheFollowedTopicsAreReported() throws Exception {
        gauge("orders", 0, 1);
        gauge("audit", 0, 1);
        source.configure(Map.of(UnderReplicationPressure.TOPICS, "ord.*"));
        source.poll();
        assertTrue(source.saturated("orders"));
        assertFalse(source.saturated("audit"));
    }

    @Test
    void aPollThatFailsKeepsTheLastStateAndIsCounted() throws Exception {
        Gauge orders = gauge("orders", 0, 1);
        source.poll();
        orders.broken = true;
        orders.value = 0;
        source.poll();
        assertTrue(source.saturated("orders"), "the last state is kept");
        assertEquals(1, source.getFaults());
        assertEquals(1, source.getPolls());

        orders.broken = false;
        source.poll();
        assertFalse(source.saturated("orders"));
    }

    @Test
    void aListenerThatThrowsIsCountedAndPollingGoesOn() throws Exception {
        Gauge orders = gauge("orders", 0, 1);
        source.onCleared(() -> {
            throw new IllegalStateException("listener fault");
        });
        source.poll();
        orders.value = 0;
        source.poll();
        assertEquals(1, source.getFaults());
        assertEquals(1, source.getClears());
        orders.value = 1;
        source.poll();
        assertTrue(source.saturated("orders"));
    }

    @Test
    void badSettingsAreRefusedNamingTheKey() {
        ConfigException notANumber = assertThrows(
                ConfigException.class, () -> source.configure(Map.of(UnderReplicationPressure.POLL_MS, "soon")));
        assertTrue(notANumber.getMessage().contains(UnderReplicationPressure.POLL_MS), notANumber.getMessage());
        assertThrows(ConfigException.class, () -> source.configure(Map.of(UnderReplicationPressure.POLL_MS, "0")));
        ConfigException badRegex = assertThrows(
                ConfigException.class, () -> source.configure(Map.of(UnderReplicationPressure.TOPICS, "(")));
        assertTrue(badRegex.getMessage().contains(UnderReplicationPressure.TOPICS), badRegex.getMessage());
    }

    /**
     * The poll thread, as on a broker: started by the first onCleared only (kpipe calls it twice), a daemon, it notices
     * a recovery within a few poll periods and wakes the last listener given; the MBean shows the state; close stops it.
     */
    @Test
    void thePollThreadFollowsTheGaugesAndWakesTheLastListener() throws Exception {
        Gauge orders = gauge("orders", 0, 1);
        UnderReplicationPressure source = new UnderReplicationPressure(server, clock::get, true);
        source.configure(Map.of(UnderReplicationPressure.POLL_MS, "10"));
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch last = new CountDownLatch(1);
        source.onCleared(first::countDown);
        source.onCleared(last::countDown);
        assertEquals(1, pollThreads(), "one poll thread");

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!source.saturated("orders") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(source.saturated("orders"), "the poll thread saw the under-replicated partition");
        ObjectName mbean = new ObjectName(UnderReplicationPressure.MBEAN);
        assertArrayEquals(new String[] {"orders"}, (String[]) server.getAttribute(mbean, "SaturatedTopics"));

        orders.value = 0;
        assertTrue(last.await(10, TimeUnit.SECONDS), "the last listener was woken");
        assertEquals(1, first.getCount(), "the replaced listener was not");
        assertFalse(source.saturated("orders"));

        source.close();
        assertFalse(server.isRegistered(mbean));
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (pollThreads() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(0, pollThreads(), "close stopped the poll thread");
    }

    private static long pollThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(UnderReplicationPressure.THREAD) && t.isAlive())
                .peek(t -> assertTrue(t.isDaemon(), "the poll thread is a daemon"))
                .count();
    }
}
