package dev.kpipe.plugin.classify;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.kafka.common.internals.Topic;

/**
 * Which topics' produce requests may be pipelined: names matching {@code kpipe.topics.include}
 * and not {@code kpipe.topics.exclude}; internal topics ({@code __consumer_offsets},
 * {@code __transaction_state}, ...) never. Decisions are cached per topic name in a bounded
 * Caffeine cache. Thread-safe.
 */
public final class TopicPolicy {
    /** Cached topic decisions at most; the least recently used are evicted beyond it. */
    public static final int MAX_CACHED_TOPICS = 100_000;

    private final Pattern include;
    private final Pattern exclude;
    private final Cache<String, Boolean> decisions;
    private final Function<String, Boolean> decide = this::decide;

    /**
     * @param include names that may be pipelined
     * @param exclude names that never are, or {@code null} for none
     */
    public TopicPolicy(Pattern include, Pattern exclude) {
        this.include = include;
        this.exclude = exclude;
        this.decisions = Caffeine.newBuilder().maximumSize(MAX_CACHED_TOPICS).build();
    }

    /**
     * Thread: any.
     *
     * @param topic a topic name
     * @return true if produce requests to it may be pipelined
     */
    public boolean pipelines(String topic) {
        return decisions.get(topic, decide);
    }

    private Boolean decide(String topic) {
        return !Topic.isInternal(topic)
            && include.matcher(topic).matches()
            && (exclude == null || !exclude.matcher(topic).matches());
    }
}
