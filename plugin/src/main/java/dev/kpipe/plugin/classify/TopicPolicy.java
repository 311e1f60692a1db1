// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kpipe.extension.ClassificationPolicy;
import dev.kpipe.extension.RegexClassificationPolicy;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.kafka.common.internals.Topic;

/**
 * Which topics' produce requests may be pipelined: those a {@link ClassificationPolicy} pipelines (by default
 * {@link RegexClassificationPolicy}: names matching {@code kpipe.topics.include} and not {@code kpipe.topics.exclude});
 * internal topics ({@code __consumer_offsets}, {@code __transaction_state}, ...) never. Decisions are cached per topic
 * name in a bounded
 * Caffeine cache; the last decision taken is kept beside it ({@link #pipelines}), so a stream of produce requests to
 * one topic, the common case, costs a string comparison per request instead of a cache look-up. Thread-safe.
 */
public final class TopicPolicy {
    /** Cached topic decisions at most; the least recently used are evicted beyond it. */
    public static final int MAX_CACHED_TOPICS = 100_000;

    private final ClassificationPolicy policy;
    private final Cache<String, Boolean> decisions;
    private final Function<String, Boolean> decide = this::decide;
    /**
     * The last decision taken, or {@code null}: an immutable pair, so a racing reader sees a whole one (final fields,
     * JLS 17.5); a plain field, since a stale pair is as right as a fresh one (the decision of a name never changes
     * for a policy).
     */
    private Decision last;

    private record Decision(String topic, boolean pipelines) {}

    /**
     * @param include names that may be pipelined
     * @param exclude names that never are, or {@code null} for none
     */
    public TopicPolicy(Pattern include, Pattern exclude) {
        this(new RegexClassificationPolicy(include, exclude));
    }

    /** @param policy which topics' writes may be pipelined; its answers are cached per topic */
    public TopicPolicy(ClassificationPolicy policy) {
        this.policy = java.util.Objects.requireNonNull(policy, "policy");
        this.decisions = Caffeine.newBuilder().maximumSize(MAX_CACHED_TOPICS).build();
    }

    /**
     * Thread: any.
     *
     * @param topic a topic name
     * @return true if produce requests to it may be pipelined
     */
    public boolean pipelines(String topic) {
        Decision d = last;
        if (d != null && (d.topic == topic || d.topic.equals(topic))) {
            return d.pipelines;
        }
        return lookUp(topic);
    }

    /** Out of line, so that {@link #pipelines} stays small enough to inline into the classification. */
    private boolean lookUp(String topic) {
        boolean pipelines = decisions.get(topic, decide);
        last = new Decision(topic, pipelines);
        return pipelines;
    }

    private Boolean decide(String topic) {
        return !Topic.isInternal(topic) && policy.pipelines(topic);
    }
}
