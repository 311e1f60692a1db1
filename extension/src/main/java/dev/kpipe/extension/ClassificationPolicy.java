// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.extension;

/**
 * Which topics' writes kpipe may pipeline: a PRODUCE request is pipelined only if the policy pipelines every topic it
 * names. kpipe's own rules apply first and cannot be overridden: internal topics ({@code __consumer_offsets},
 * {@code __transaction_state}, ...) are never pipelined, and neither is a produce naming a topic id the broker does
 * not know.
 *
 * <p>Configured by class name ({@code kpipe.classification.policy.class}; default {@link RegexClassificationPolicy}
 * over {@code kpipe.topics.include} and {@code kpipe.topics.exclude}): a class with a public no-argument constructor,
 * optionally implementing {@code org.apache.kafka.common.Configurable} to receive the broker's configuration (it is
 * configured again, as a new instance, when {@code kpipe.topics.include} or {@code kpipe.topics.exclude} change at
 * runtime).
 *
 * <p>Threads and cost: called on network threads, before a request is queued; must not block. kpipe caches each
 * topic's answer for the policy's lifetime (up to 100,000 topics), so the answer must depend on the topic alone. A
 * throwable is caught and counted ({@code classification-fallback-total}); the request is then handled classically.
 */
@FunctionalInterface
public interface ClassificationPolicy {

    /**
     * @param topic a topic name
     * @return true if writes to it may be pipelined
     */
    boolean pipelines(String topic);
}
