// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PortsTest {

    @Test
    void portsAreDistinctBindableAndBelowTheEphemeralRange() throws IOException {
        int ephemeralLow = Ports.ephemeralLow();
        if (Files.isReadable(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            assertTrue(ephemeralLow > 1024, "read the ephemeral range's low end as " + ephemeralLow);
        }
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int port = Ports.freeLoopbackPort();
            assertTrue(ports.add(port), "handed out twice: " + port);
            if (ephemeralLow - Ports.LOWEST >= 1_000) {
                assertTrue(
                        port >= Ports.LOWEST && port < ephemeralLow,
                        port + " outside " + Ports.LOWEST + "-" + ephemeralLow);
            }
        }
        int port = Ports.freeLoopbackPort();
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            assertEquals(port, s.getLocalPort());
        }
    }

    @Test
    void skipsAPortSomebodyElseHasBound() throws IOException {
        int first = Ports.freeLoopbackPort();
        try (ServerSocket taken = new ServerSocket(first + 1, 1, InetAddress.getLoopbackAddress())) {
            int second = Ports.freeLoopbackPort();
            assertFalse(second == taken.getLocalPort(), "handed out a bound port");
        }
    }

    @Test
    void firstErrorsPicksTheCauseOutOfABrokerLog() {
        String log = String.join(
                "\n",
                "[2026-12-01 14:37:29,001] INFO starting (kafka.server.KafkaRaftServer)",
                "[2026-12-01 14:37:29,900] ERROR [ControllerServer id=1] Fatal error during controller startup."
                        + " Prepare to shutdown (kafka.server.ControllerServer)",
                "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:38321: Address already"
                        + " in use.",
                "\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:739)",
                "Caused by: java.net.BindException: Address already in use",
                "[2026-12-01 14:37:30,117] INFO [SocketServer listenerType=CONTROLLER, nodeId=1] Stopping (x)");
        assertEquals(
                String.join(
                        "\n",
                        "[2026-12-01 14:37:29,900] ERROR [ControllerServer id=1] Fatal error during controller startup."
                                + " Prepare to shutdown (kafka.server.ControllerServer)",
                        "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:38321: Address already"
                                + " in use.",
                        "Caused by: java.net.BindException: Address already in use"),
                KafkaNode.firstErrors(log, 12));
        assertEquals("(none)", KafkaNode.firstErrors("[x] INFO fine (y)", 12));
    }
}
