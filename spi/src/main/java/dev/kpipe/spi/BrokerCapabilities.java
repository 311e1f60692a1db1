// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * What the broker the plugin was installed into can report, told once by {@link NetworkEventListener#onInstalled}
 * before any other event.
 *
 * @param kafkaVersion the broker's Kafka version, e.g. {@code 4.4.0}
 * @param deferredDispatch the APIs for which the broker reports a request's order-defining step when it happens after
 *     {@code KafkaApis.handle} returned ({@link NetworkEventListener#onDispatchDeferred}, then
 *     {@link NetworkEventListener#onRequestDispatched}); for any other API {@code onRequestDispatched} comes at
 *     handle-return, so a request of such an API whose step comes later must not be pipelined
 */
public record BrokerCapabilities(String kafkaVersion, Set<ApiKeys> deferredDispatch) {

    /** Copies the set: the record is immutable. */
    public BrokerCapabilities {
        deferredDispatch = Set.copyOf(deferredDispatch);
    }
}
