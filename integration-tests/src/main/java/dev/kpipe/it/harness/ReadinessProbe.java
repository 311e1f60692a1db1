// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;

/** Readiness probing of a starting {@link KafkaNode} with a short-timeout admin client (caller's thread; ms). */
final class ReadinessProbe {
    private ReadinessProbe() {}

    /** @return an admin client of short timeouts on one node's client listener, for {@link #seesBrokers} */
    static Admin probeAdmin(String bootstrapAddress, int id) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapAddress);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, "50");
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "200");
        props.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        props.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "200");
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kpipe-it-probe-" + id);
        return Admin.create(props);
    }

    /** @return the ids this node reports if they include {@code expected}, else null (also on errors) */
    static Set<Integer> seesBrokers(Admin probe, Set<Integer> expected) throws InterruptedException {
        try {
            Set<Integer> ids = probe
                    .describeCluster(new DescribeClusterOptions().timeoutMs(1500))
                    .nodes()
                    .get(2, TimeUnit.SECONDS)
                    .stream()
                    .map(Node::id)
                    .collect(Collectors.toSet());
            return ids.containsAll(expected) ? ids : null;
        } catch (ExecutionException | TimeoutException e) {
            return null;
        }
    }
}
