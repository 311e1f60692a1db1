package dev.kpipe.it.wire;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;

/**
 * The request versions a broker accepts, read with one {@code ApiVersions} v3 request on a connection of its own, so
 * that raw-wire tests send, on every supported Kafka line, the newest version both the test's kafka-clients and the
 * broker know (Kafka 3.8/3.9 accept produce up to v11, 4.0 up to v12, 4.1+ v13 with topic ids). Immutable.
 */
public final class BrokerApiVersions {
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
            ApiVersionsResponse response = (ApiVersionsResponse) conn.receive(ApiKeys.API_VERSIONS, (short) 3).response();
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
