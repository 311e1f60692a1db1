package dev.kpipe.it.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/** Free loopback TCP ports; never hands out the same port twice in one JVM. Thread-safe. */
final class Ports {
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private Ports() {}

  /** @return a port that was free on 127.0.0.1 a moment ago */
  static synchronized int freeLoopbackPort() {
    for (int attempt = 0; attempt < 100; attempt++) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = s.getLocalPort();
        if (HANDED_OUT.add(port)) {
          return port;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    throw new IllegalStateException("no free loopback port found");
  }
}
