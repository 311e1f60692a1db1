// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.spi;

import org.apache.kafka.common.Uuid;

/**
 * Resolves topic ids to names from the broker's metadata cache, for requests that name topics by
 * id (PRODUCE v13+, KIP-516).
 */
@FunctionalInterface
public interface TopicNames {
    /**
     * Thread: any; must not block.
     *
     * @param topicId a topic id
     * @return the topic's name, or {@code null} if the broker does not know the id
     */
    String topicName(Uuid topicId);
}
