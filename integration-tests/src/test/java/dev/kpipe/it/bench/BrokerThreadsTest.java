// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link BrokerThreads}' parsing of {@code jcmd Thread.print} and of {@code /proc/<pid>/task/<tid>} files. */
class BrokerThreadsTest {

    @Test
    void findsTheClientListenersProcessorsAndTheRequestHandlersByName() {
        String print = String.join(
                "\n",
                "\"data-plane-kafka-network-thread-1-ListenerName(PLAINTEXT)-PLAINTEXT-0\" #71 daemon prio=5 os_prio=0"
                        + " cpu=812.31ms elapsed=40.12s tid=0x00007f1c2c0a1000 nid=0x4d2e runnable  [0x00007f1bb5dfd000]",
                "   java.lang.Thread.State: RUNNABLE",
                "\"data-plane-kafka-network-thread-1-PLAINTEXT-PLAINTEXT-1\" #72 daemon prio=5 tid=0x3 nid=0x4d2f runnable",
                "\"data-plane-kafka-network-thread-1-CONTROLLER-PLAINTEXT-0\" #61 prio=5 tid=0x4 nid=0x4d11 runnable",
                "\"data-plane-kafka-network-thread-1-ListenerName(CONTROLLER)-PLAINTEXT-0\" #60 prio=5 os_prio=0"
                        + " cpu=1.00ms elapsed=40.00s tid=0x00007f1c2c0a2000 nid=0x4d10 runnable",
                "\"data-plane-kafka-request-handler-0\" #80 daemon prio=5 os_prio=0 cpu=2.00ms elapsed=39.00s"
                        + " tid=0x00007f1c2c0b1000 nid=19758 waiting on condition  [0x00007f1bb4cfc000]",
                "\"data-plane-kafka-request-handler-1\" #81 daemon prio=5 cpu=2.00ms tid=0x1 nid=0x4d30 waiting",
                "\"kafka-scheduler-0\" #90 daemon prio=5 tid=0x2 nid=0x4d40 waiting",
                "\"GC Thread#0\" os_prio=0 cpu=35.10ms elapsed=41.00s tid=0x5 nid=0x4d01 runnable",
                "\"G1 Conc#0\" os_prio=0 cpu=3.00ms elapsed=41.00s tid=0x6 nid=0x4d02 runnable");
        Map<BrokerThreads.Role, List<Long>> tids = new EnumMap<>(BrokerThreads.Role.class);
        for (BrokerThreads.Role r : BrokerThreads.Role.values()) {
            tids.put(r, new ArrayList<>());
        }
        BrokerThreads.parse(print, tids);
        assertEquals(List.of(0x4d2eL, 0x4d2fL), tids.get(BrokerThreads.Role.NETWORK));
        assertEquals(List.of(19758L, 0x4d30L), tids.get(BrokerThreads.Role.HANDLER));
        assertEquals(List.of(0x4d01L, 0x4d02L), tids.get(BrokerThreads.Role.GC));
    }

    @Test
    void readsVoluntarySwitchesAndCpuTicks() {
        assertEquals(
                4711,
                BrokerThreads.voluntarySwitches("Name:\tdata-plane-kafk\nState:\tS (sleeping)\n"
                        + "voluntary_ctxt_switches:\t4711\nnonvoluntary_ctxt_switches:\t12\n"));
        // pid (comm with spaces) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        assertEquals(
                130 + 27,
                BrokerThreads.cpuTicks("19758 (data-plane kafk) S 1 1 1 0 -1 4194368 10 0 0 0 130 27 0 0 20 0 1 0"));
    }
}
