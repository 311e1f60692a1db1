package dev.kpipe.plugin.classify;

import dev.kpipe.spi.TopicNames;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * The default classification policy (see {@link RequestClass}): PRODUCE (any acks) whose every topic the
 * {@link TopicPolicy} pipelines is {@link RequestClass#PIPELINED}, a transactional one only while
 * {@code kpipe.transactions.pipelined} is on and the broker reports deferred dispatch (KIP-890: its append may come
 * after {@code KafkaApis.handle} returned; see {@code NetworkEventListener.onDispatchDeferred});
 * METADATA, API_VERSIONS, GET_TELEMETRY_SUBSCRIPTIONS and PUSH_TELEMETRY are
 * {@link RequestClass#PIPELINED_NO_UPGRADE}; everything else (the transaction APIs among them), a transactional
 * produce otherwise, and produce that names a topic outside the policy or an unknown topic id, is
 * {@link RequestClass#EXCLUSIVE}. Thread-safe; runs on network threads; allocates nothing for a cached topic.
 */
public final class RequestClassifier {
    private volatile TopicPolicy topics;
    private volatile TopicNames topicNames;
    /** {@code kpipe.transactions.pipelined}. */
    private volatile boolean transactionsPipelined = true;
    /** The broker reports deferred dispatch (told at install); until then transactional produce is exclusive. */
    private volatile boolean deferredDispatch;

    /** @param topics the topic policy */
    public RequestClassifier(TopicPolicy topics) {
        this.topics = topics;
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
     * Sets {@code kpipe.transactions.pipelined}; requests read from now on are classified with it. Thread: any.
     *
     * @param pipelined whether transactional produce may be pipelined
     */
    public void transactionsPipelined(boolean pipelined) {
        this.transactionsPipelined = pipelined;
    }

    /** @return {@code kpipe.transactions.pipelined} as last set; thread: any */
    public boolean transactionsPipelined() {
        return transactionsPipelined;
    }

    /**
     * Sets whether the broker's hooks report deferred dispatch (KIP-890 verified appends). Without it a
     * transactional produce is exclusive whatever {@code kpipe.transactions.pipelined} says. Thread: any.
     *
     * @param supported what the binding reported
     */
    public void deferredDispatch(boolean supported) {
        this.deferredDispatch = supported;
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
        switch (apiKey) {
            case PRODUCE:
                return classifyProduce((ProduceRequest) body);
            case METADATA:
            case API_VERSIONS:
            case GET_TELEMETRY_SUBSCRIPTIONS:
            case PUSH_TELEMETRY:
                return RequestClass.PIPELINED_NO_UPGRADE;
            default:
                return RequestClass.EXCLUSIVE;
        }
    }

    private RequestClass classifyProduce(ProduceRequest produce) {
        if (produce.transactionalId() != null && !(transactionsPipelined && deferredDispatch)) {
            return RequestClass.EXCLUSIVE;
        }
        ProduceRequestData.TopicProduceDataCollection data = produce.data().topicData();
        if (data.isEmpty()) {
            return RequestClass.EXCLUSIVE;
        }
        TopicPolicy policy = topics;
        for (ProduceRequestData.TopicProduceData topic : data) {
            String name = topic.name();
            if (name == null || name.isEmpty()) {
                TopicNames names = topicNames;
                name = names == null ? null : names.topicName(ProduceTopicIds.of(topic));
                if (name == null) {
                    return RequestClass.EXCLUSIVE;
                }
            }
            if (!policy.pipelines(name)) {
                return RequestClass.EXCLUSIVE;
            }
        }
        return RequestClass.PIPELINED;
    }
}
