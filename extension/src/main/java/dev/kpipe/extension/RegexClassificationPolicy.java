// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.extension;

import java.util.regex.Pattern;

/**
 * The default {@link ClassificationPolicy}: topics whose name matches {@code kpipe.topics.include} and does not match
 * {@code kpipe.topics.exclude} (full matches, Java regular expressions). Immutable; thread-safe.
 */
public final class RegexClassificationPolicy implements ClassificationPolicy {

    private final Pattern include;
    private final Pattern exclude;

    /**
     * @param include names that may be pipelined
     * @param exclude names that never are, or {@code null} for none
     */
    public RegexClassificationPolicy(Pattern include, Pattern exclude) {
        this.include = java.util.Objects.requireNonNull(include, "include");
        this.exclude = exclude;
    }

    @Override
    public boolean pipelines(String topic) {
        return include.matcher(topic).matches()
                && (exclude == null || !exclude.matcher(topic).matches());
    }

    @Override
    public String toString() {
        return "include " + include + (exclude == null ? "" : ", exclude " + exclude);
    }
}
