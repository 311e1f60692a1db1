// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@link TopicPolicy}: its last-decision fast path answers as the rules do, whatever the order of the names. */
class TopicPolicyTest {

    private static final Pattern INCLUDE = Pattern.compile("orders-.*|audit");
    private static final Pattern EXCLUDE = Pattern.compile("orders-private-.*");

    private static boolean rules(String topic) {
        return !org.apache.kafka.common.internals.Topic.isInternal(topic)
                && INCLUDE.matcher(topic).matches()
                && !EXCLUDE.matcher(topic).matches();
    }

    @Test
    void repeatedAndInterleavedNamesAnswerAsTheRules() {
        TopicPolicy policy = new TopicPolicy(INCLUDE, EXCLUDE);
        String[] names = {
            "orders-1",
            "orders-private-1",
            "audit",
            "audit-2",
            "__consumer_offsets",
            "orders-2",
            "__transaction_state",
            "other"
        };
        Random random = new Random(14);
        int pipelined = 0;
        for (int i = 0; i < 10_000; i++) {
            // runs of one name (the fast path) and switches (the cache), with equal names that are not the same object
            String name = new String(names[random.nextInt(names.length)]);
            int run = 1 + random.nextInt(4);
            for (int j = 0; j < run; j++) {
                boolean expected = rules(name);
                assertEquals(expected, policy.pipelines(name), name);
                if (expected) {
                    pipelined++;
                }
            }
        }
        assertEquals(true, pipelined > 0, "some names were pipelined");
    }

    @Test
    void aNewPolicyDecidesByItsOwnRules() {
        TopicPolicy all = new TopicPolicy(Pattern.compile(".*"), null);
        TopicPolicy none = new TopicPolicy(Pattern.compile(".*"), Pattern.compile("orders-.*"));
        assertEquals(true, all.pipelines("orders-1"));
        assertEquals(false, none.pipelines("orders-1"));
        assertEquals(true, all.pipelines("orders-1"));
        assertEquals(false, all.pipelines("__consumer_offsets"));
    }
}
