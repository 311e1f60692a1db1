// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.wire;

import dev.kpipe.it.harness.HarnessSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;

/**
 * The request versions a broker accepts, read with one {@code ApiVersions} v3 request on a connection of its own, so
 * that raw-wire tests send, on every supported Kafka line, the newest version both the test's kafka-clients and the
 * broker know (Kafka 3.8/3.9 accept produce up to v11, 4.0 up to v12, 4.1+ v13 with topic ids). Or read, without a
 * broker, from the {@code kafka-clients} jar of the distribution the harness runs by default ({@link
 * #harnessDefault()}), for test helpers that pick their versions once. Immutable.
 */
public final class BrokerApiVersions {
    private static volatile BrokerApiVersions harnessDefault;
    private final Map<ApiKeys, Short> max;

    private BrokerApiVersions(Map<ApiKeys, Short> max) {
        this.max = max;
    }

    /**
     * @param host the broker's host
     * @param port a listener that needs no authentication before {@code ApiVersions} (PLAINTEXT, or SASL)
     * @return the broker's versions
     * @throws IOException if the broker cannot be asked
     */
    public static BrokerApiVersions of(String host, int port) throws IOException {
        try (RawKafkaConnection conn = new RawKafkaConnection(host, port, "api-versions", Duration.ofSeconds(30))) {
            conn.send(1, new ApiVersionsRequest.Builder().build((short) 3));
            ApiVersionsResponse response = (ApiVersionsResponse)
                    conn.receive(ApiKeys.API_VERSIONS, (short) 3).response();
            Map<ApiKeys, Short> max = new EnumMap<>(ApiKeys.class);
            for (ApiVersionsResponseData.ApiVersion v : response.data().apiKeys()) {
                if (ApiKeys.hasId(v.apiKey())) {
                    max.put(ApiKeys.forId(v.apiKey()), v.maxVersion());
                }
            }
            return new BrokerApiVersions(max);
        }
    }

    /**
     * The versions of the broker the harness runs by default ({@code kpipe.it.kafka.home}, which each failsafe
     * execution sets): {@code ApiKeys.latestVersion()} of that distribution's own {@code kafka-clients} jar, loaded in
     * a class loader of its own. Thread-safe; computed once per JVM.
     *
     * @return the default broker's versions
     */
    public static BrokerApiVersions harnessDefault() {
        BrokerApiVersions v = harnessDefault;
        if (v == null) {
            v = ofDistribution(HarnessSettings.load().kafkaHome());
            harnessDefault = v;
        }
        return v;
    }

    /**
     * @param kafkaHome a laid-out distribution (holding {@code libs/kafka-clients-*.jar})
     * @return the newest version of each API its {@code kafka-clients} knows (what its broker accepts)
     */
    static BrokerApiVersions ofDistribution(Path kafkaHome) {
        try (Stream<Path> libs = Files.list(kafkaHome.resolve("libs"))) {
            Path clients = libs.filter(p -> p.getFileName().toString().matches("kafka-clients-[0-9].*\\.jar"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no kafka-clients jar in " + kafkaHome));
            try (URLClassLoader loader =
                    new URLClassLoader(new URL[] {clients.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
                Class<?> keys = Class.forName("org.apache.kafka.common.protocol.ApiKeys", true, loader);
                Map<ApiKeys, Short> max = new EnumMap<>(ApiKeys.class);
                for (Object k : keys.getEnumConstants()) {
                    String name = ((Enum<?>) k).name();
                    short latest = (short) keys.getMethod("latestVersion").invoke(k);
                    for (ApiKeys ours : ApiKeys.values()) {
                        if (ours.name().equals(name)) {
                            max.put(ours, latest);
                        }
                    }
                }
                return new BrokerApiVersions(max);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the API versions of " + kafkaHome, e);
        }
    }

    /**
     * @param api an API
     * @return the newest version of it the broker accepts
     * @throws IllegalStateException if the broker does not offer the API
     */
    public short max(ApiKeys api) {
        Short v = max.get(api);
        if (v == null) {
            throw new IllegalStateException("the broker does not offer " + api);
        }
        return v;
    }

    /**
     * @param api an API
     * @param wanted the version the test would send to the newest broker
     * @return {@code wanted}, or the broker's newest version of the API if it is older
     */
    public short upTo(ApiKeys api, short wanted) {
        return (short) Math.min(wanted, max(api));
    }
}
