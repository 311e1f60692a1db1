// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceRequestData;

/**
 * The topic id of a produce request's topic (produce v13+, KIP-516: the topic is named by id, its name is empty). Its
 * own class because {@code TopicProduceData.topicId()} exists only in kafka-clients 4.1 and later: brokers before 4.1
 * (3.8, 3.9, 4.0) parse produce up to v11 or v12, whose topics always carry a name, so {@link RequestClassifier} never
 * reaches this class there and the JVM never resolves the member (the linkage test checks exactly that: it excuses
 * this class only on a broker whose latest produce version is below 13). Thread: any; stateless.
 */
final class ProduceTopicIds {
    private ProduceTopicIds() {}

    /**
     * @param topic a produce request's topic data, from a v13+ request
     * @return its topic id
     */
    static Uuid of(ProduceRequestData.TopicProduceData topic) {
        return topic.topicId();
    }
}
