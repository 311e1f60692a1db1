// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.KafkaNode;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

/**
 * {@code --s9-slow-quota-kib}: Kafka's own produce byte-rate quota ({@code producer_byte_rate}, KIP-13's client-id
 * quota) on the S9 slow readers' client id ({@link SlowReaders#CLIENT_ID}), set through the Admin API ({@code
 * alterClientQuotas}) and awaited until the cluster reports it ({@code describeClientQuotas}); and the broker's
 * quota figures for that client id ({@code kafka.server:type=Produce}, the {@code ClientQuotaManager}'s sensors).
 * Stateless; the benchmark's main thread.
 */
final class SlowReaderQuota {
    /** The quota's key, as {@code kafka-configs.sh --add-config} names it. */
    static final String PRODUCER_BYTE_RATE = "producer_byte_rate";

    private static final Duration AWAIT = Duration.ofSeconds(30);

    private SlowReaderQuota() {}

    /**
     * Sets the quota on every cluster of a scenario ({@link #set}).
     *
     * @param clusters stock, kpipe and any A/A control, started
     * @param kibPerSec the quota, KiB/s
     * @return one line for the output, saying what was set
     * @throws Exception if a cluster does not take or report it
     */
    static String setAll(Cluster[] clusters, int kibPerSec) throws Exception {
        for (Cluster c : clusters) {
            set(c, kibPerSec);
        }
        return String.format(
                Locale.ROOT,
                "%s = %d KiB/s for client.id %s on every cluster (describeClientQuotas reports it)",
                PRODUCER_BYTE_RATE,
                kibPerSec,
                SlowReaders.CLIENT_ID);
    }

    /**
     * Sets the quota on {@code c} and waits until {@code describeClientQuotas} returns it.
     *
     * @param c a started cluster
     * @param kibPerSec the quota, KiB/s
     * @return the quota the cluster reports, bytes/s
     * @throws Exception if the Admin calls fail, or the quota is not reported within 30 s
     */
    static double set(Cluster c, int kibPerSec) throws Exception {
        Admin admin = c.admin();
        ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, SlowReaders.CLIENT_ID));
        double bytesPerSec = kibPerSec * 1024.0;
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(
                        entity, List.of(new ClientQuotaAlteration.Op(PRODUCER_BYTE_RATE, bytesPerSec)))))
                .all()
                .get(AWAIT.toSeconds(), TimeUnit.SECONDS);
        ClientQuotaFilter filter = ClientQuotaFilter.containsOnly(
                List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.CLIENT_ID, SlowReaders.CLIENT_ID)));
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (true) {
            Map<String, Double> q = admin.describeClientQuotas(filter)
                    .entities()
                    .get(AWAIT.toSeconds(), TimeUnit.SECONDS)
                    .get(entity);
            if (q != null && q.getOrDefault(PRODUCER_BYTE_RATE, -1.0) == bytesPerSec) {
                return bytesPerSec;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("--s9-slow-quota-kib: " + c.dir() + " does not report "
                        + PRODUCER_BYTE_RATE + "=" + bytesPerSec + " for client id " + SlowReaders.CLIENT_ID
                        + " within " + AWAIT.toSeconds() + " s (it reports " + q + ")");
            }
            Thread.sleep(100);
        }
    }

    /**
     * @param node the leader
     * @param attribute {@code throttle-time} (average throttle per request, ms) or {@code byte-rate} (bytes/s), over
     *     the quota sensors' window
     * @return the attribute of the slow readers' {@code kafka.server:type=Produce} sensor, NaN if the broker has none
     *     (no quota: Kafka records none)
     */
    static double brokerFigure(KafkaNode node, String attribute) {
        try {
            MBeanServerConnection jmx = node.jmx();
            Set<ObjectName> names = jmx.queryNames(new ObjectName("kafka.server:type=Produce,*"), null);
            for (ObjectName n : names) {
                if (SlowReaders.CLIENT_ID.equals(n.getKeyProperty("client-id"))) {
                    return ((Number) jmx.getAttribute(n, attribute)).doubleValue();
                }
            }
            return Double.NaN;
        } catch (Exception e) {
            return Double.NaN;
        }
    }
}
