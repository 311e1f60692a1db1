// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback TCP ports for the listeners of child brokers, ZooKeeper, JMX and published container ports. Never hands
 * out the same port twice in one JVM. Thread-safe.
 *
 * <p>Ports come from <em>below</em> the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range}, 32768–60999
 * on Linux by default). A port the kernel hands out for {@code bind(0)} is one it may also hand out a moment later as
 * the local port of some process's outgoing connection; between picking a port and the child JVM binding it, the
 * dozens of client connections a test opens can take it, and the broker then dies with "Address already in use". A
 * port below that range is only ever taken by an explicit bind, which the check here sees.
 */
public final class Ports {
    /** Lowest port handed out, well above the registered services most hosts run. */
    static final int LOWEST = 15_000;

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final Set<Integer> HANDED_OUT = new HashSet<>();
    private static int next = -1;

    private Ports() {}

    /**
     * Returns a port that was free on 127.0.0.1 a moment ago and that outgoing connections cannot take.
     *
     * @return the port
     * @throws IllegalStateException if no free port is found below the ephemeral range
     */
    public static synchronized int freeLoopbackPort() {
        int highest = ephemeralLow() - 1;
        if (highest - LOWEST < 1_000) {
            return anyFreePort(); // an unusual range leaves no room below it; fall back to what the kernel picks
        }
        int span = highest - LOWEST + 1;
        if (next < 0) {
            next = LOWEST + ThreadLocalRandom.current().nextInt(span); // two test JVMs on one host rarely collide
        }
        for (int attempt = 0; attempt < span; attempt++) {
            int port = next;
            next = port == highest ? LOWEST : port + 1;
            if (!HANDED_OUT.contains(port) && isFree(port)) {
                HANDED_OUT.add(port);
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port in " + LOWEST + "-" + highest);
    }

    /** @return the low end of the kernel's ephemeral port range, or 32768 where it cannot be read */
    static int ephemeralLow() {
        // Files.readString trusts the size /proc reports and returns a single byte of this file
        try (BufferedReader in = Files.newBufferedReader(EPHEMERAL_RANGE)) {
            String[] range = in.readLine().trim().split("\\s+");
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return s.isBound();
        } catch (IOException e) {
            return false;
        }
    }

    private static int anyFreePort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                if (HANDED_OUT.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        throw new IllegalStateException("no free loopback port found");
    }
}
