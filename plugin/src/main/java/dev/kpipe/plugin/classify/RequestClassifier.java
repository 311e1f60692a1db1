// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import dev.kpipe.spi.TopicNames;
import java.util.Set;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * The default classification policy (see {@link RequestClass}): an API's row of {@link PipelinedApi} gives its class,
 * unless its switch is off or the request is one the row does not cover; everything without a row is
 * {@link RequestClass#EXCLUSIVE}. Per request, read from the row: for a row with {@link PipelinedApi#topicPolicy()}
 * (PRODUCE) only if the {@link TopicPolicy} pipelines every topic it names (an unknown topic id: exclusive); a
 * {@link PipelinedApi#transactional transactional} request (transactional PRODUCE, TXN_OFFSET_COMMIT) only while
 * {@link PipelinedApi.Switch#TRANSACTIONS} is on and, for a row dispatched
 * {@link DispatchPoint#AFTER_VERIFICATION}, the broker reports deferred dispatch for its API (KIP-890: its
 * order-defining step may come after {@code KafkaApis.handle} returned; see
 * {@code NetworkEventListener.onDispatchDeferred}). Thread-safe; runs on network threads; allocates nothing for a
 * cached topic.
 */
public final class RequestClassifier {
    private volatile TopicPolicy topics;
    private volatile TopicNames topicNames;
    /**
     * The on/off state of each {@link PipelinedApi.Switch}, one bit per ordinal, a bit set when on; {@code NONE}'s bit
     * is always set. Written under this object's lock, read without.
     */
    private volatile int on;
    /**
     * The APIs for which the broker reports deferred dispatch (told at install); until then their transactional
     * requests are exclusive.
     */
    private volatile Set<ApiKeys> deferredDispatch = Set.of();

    /** @param topics the topic policy */
    public RequestClassifier(TopicPolicy topics) {
        this.topics = topics;
        int bits = 0;
        for (PipelinedApi.Switch s : PipelinedApi.Switch.values()) {
            bits |= s.defaultOn() ? bit(s) : 0;
        }
        this.on = bits;
    }

    static {
        if (PipelinedApi.Switch.values().length > Integer.SIZE) {
            throw new IllegalStateException("more switches than bits in an int");
        }
    }

    /**
     * Replaces the topic policy ({@code kpipe.topics.include} / {@code kpipe.topics.exclude} altered at runtime);
     * requests read from now on are classified with it. A produce request to a topic the new policy no longer
     * pipelines is exclusive: its pipelined connection drains and downgrades, as for any exclusive request.
     * Thread: any.
     *
     * @param topics the new policy
     */
    public void topics(TopicPolicy topics) {
        this.topics = java.util.Objects.requireNonNull(topics);
    }

    /**
     * Turns a switch on or off; requests read from now on are classified with it. The rows it turns off
     * ({@link PipelinedApi#turnedOffBy()}) are exclusive while it is off; {@link PipelinedApi.Switch#TRANSACTIONS}
     * off makes every transactional request exclusive. Thread: any.
     *
     * @param s the switch; {@link PipelinedApi.Switch#NONE} stays on
     * @param pipelined whether what it covers may be pipelined
     */
    public synchronized void switchOn(PipelinedApi.Switch s, boolean pipelined) {
        if (s != PipelinedApi.Switch.NONE) {
            on = pipelined ? on | bit(s) : on & ~bit(s);
        }
    }

    /**
     * @param s a switch
     * @return whether it is on, as last set (or its default); thread: any
     */
    public boolean isOn(PipelinedApi.Switch s) {
        return (on & bit(s)) != 0;
    }

    private static int bit(PipelinedApi.Switch s) {
        return 1 << s.ordinal();
    }

    /**
     * Sets the APIs for which the broker's hooks report deferred dispatch (KIP-890 verified writes). Without it a
     * transactional request of such an API is exclusive whatever {@code kpipe.transactions.pipelined} says. Thread:
     * any.
     *
     * @param apis what the binding reported
     */
    public void deferredDispatch(Set<ApiKeys> apis) {
        this.deferredDispatch = Set.copyOf(apis);
    }

    /**
     * @param api an API
     * @return true if the broker reports deferred dispatch for it
     */
    public boolean deferredDispatch(ApiKeys api) {
        return deferredDispatch.contains(api);
    }

    /**
     * Sets the resolver for produce requests that name topics by id (v13+, KIP-516). Until it is
     * set, such requests are exclusive. Thread: any.
     *
     * @param names the broker's resolver
     */
    public void topicNames(TopicNames names) {
        this.topicNames = names;
    }

    /**
     * Thread: network.
     *
     * @param apiKey the request's API
     * @param body the parsed request
     * @return its class
     */
    public RequestClass classify(ApiKeys apiKey, AbstractRequest body) {
        PipelinedApi row = PipelinedApi.of(apiKey);
        int switches = on;
        if (row == null
                || (switches & bit(row.turnedOffBy())) == 0
                || (row.transactional(body) && !transactional(row, switches))
                || (row.topicPolicy() && !topicsPipelined((ProduceRequest) body))) {
            return RequestClass.EXCLUSIVE;
        }
        return row.requestClass();
    }

    /**
     * @return true if a transactional request of the row may be pipelined: {@link PipelinedApi.Switch#TRANSACTIONS} is
     *     on and, for a row dispatched after the verification, the broker reports its deferred step
     */
    private boolean transactional(PipelinedApi row, int switches) {
        return (switches & bit(PipelinedApi.Switch.TRANSACTIONS)) != 0
                && (row.dispatchPoint() != DispatchPoint.AFTER_VERIFICATION || deferredDispatch.contains(row.api()));
    }

    /**
     * The topics a produce request writes to, for a storage source that reports pressure per topic: each topic's name,
     * or its id for a request that names topics by id (v13+, KIP-516), resolved only when asked
     * ({@link #topicName(Object)}). Thread: network.
     *
     * @param produce a produce request
     * @param previous the topics of the connection's previous produce, or {@code null}
     * @return {@code previous} if the request writes to the same topics in the same order (no allocation), else a new
     *     array
     */
    public Object[] topicsOf(ProduceRequest produce, Object[] previous) {
        ProduceRequestData.TopicProduceDataCollection data = produce.data().topicData();
        int n = data.size();
        Object[] out = previous != null && previous.length == n ? previous : new Object[n];
        int i = 0;
        for (ProduceRequestData.TopicProduceData topic : data) {
            String name = topic.name();
            Object ref = name == null || name.isEmpty() ? ProduceTopicIds.of(topic) : name;
            if (!ref.equals(out[i])) {
                if (out == previous) {
                    out = java.util.Arrays.copyOf(previous, n);
                }
                out[i] = ref;
            }
            i++;
        }
        return out;
    }

    /**
     * @param topic an element of {@link #topicsOf}: a name, or a topic id
     * @return the topic's name, {@code null} for an id the broker does not know. Thread: any.
     */
    public String topicName(Object topic) {
        if (topic instanceof String name) {
            return name;
        }
        TopicNames names = topicNames;
        return names == null ? null : names.topicName((org.apache.kafka.common.Uuid) topic);
    }

    /** @return the topic's name: its own, or resolved from its id (v13+); {@code null} if unknown */
    private String nameOf(ProduceRequestData.TopicProduceData topic) {
        String name = topic.name();
        if (name == null || name.isEmpty()) {
            TopicNames names = topicNames;
            name = names == null ? null : names.topicName(ProduceTopicIds.of(topic));
        }
        return name;
    }

    /** @return true if the request names at least one topic and the topic policy pipelines every one */
    private boolean topicsPipelined(ProduceRequest produce) {
        ProduceRequestData.TopicProduceDataCollection data = produce.data().topicData();
        if (data.isEmpty()) {
            return false;
        }
        TopicPolicy policy = topics;
        for (ProduceRequestData.TopicProduceData topic : data) {
            String name = nameOf(topic);
            if (name == null || !policy.pipelines(name)) {
                return false;
            }
        }
        return true;
    }
}
