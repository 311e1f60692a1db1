// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.backpressure.ByteBudget;
import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.plugin.classify.PipelinedApi;
import dev.kpipe.plugin.pipeline.PipelineStats;
import dev.kpipe.plugin.pipeline.WaitReason;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;

/**
 * kpipe's metrics in a Kafka {@link Metrics} registry, group {@value #GROUP}, exposed in JMX beside
 * the broker's own as {@code kafka.server:type=kpipe-metrics} (with a {@code node-id} tag where the JVM runs another
 * broker's kpipe already: {@link JmxNames}). One registry per broker.
 */
public final class KpipeMetrics implements AutoCloseable {
    /** The metrics group (the JMX {@code type}). */
    public static final String GROUP = "kpipe-metrics";
    /** The JMX domain, the broker's own. */
    public static final String JMX_PREFIX = "kafka.server";

    private final Metrics metrics;
    private final Map<String, String> tags;

    /**
     * Registers every metric, with its broker's tags.
     *
     * @param stats the pipelining counters
     * @param budget the broker-wide in-flight byte budget
     * @param hooks what the broker's hooks counted (its own, not the other brokers' of the JVM)
     * @param tags the tags of every metric (and so of the MBean's name, {@link JmxNames}): none, or {@code node-id}
     */
    public KpipeMetrics(PipelineStats stats, ByteBudget budget, HookCounters hooks, Map<String, String> tags) {
        this.tags = Map.copyOf(tags);
        this.metrics = new Metrics(
                new MetricConfig(), List.of(new JmxReporter()), Time.SYSTEM, new KafkaMetricsContext(JMX_PREFIX));
        gauge(
                "pipelined-connections",
                "Connections currently in pipelined or draining mode.",
                s -> s.pipelinedConnections(),
                stats);
        gauge(
                "connections-tracked",
                "Entries in kpipe's connection table (connections it keeps state for),"
                        + " counted from the table: equals pipelined-connections unless kpipe's bookkeeping is broken.",
                s -> s.connectionsTracked(),
                stats);
        gauge(
                "inflight-requests",
                "Requests read on pipelined connections and not yet answered.",
                s -> s.inflightRequests(),
                stats);
        gauge(
                "inflight-requests-per-connection-avg",
                "Average requests in flight per pipelined connection now.",
                s -> s.pipelinedConnections() == 0 ? 0.0 : (double) s.inflightRequests() / s.pipelinedConnections(),
                stats);
        gauge(
                "inflight-requests-per-connection-max",
                "The most requests in flight at once on one connection since start.",
                s -> s.maxInflightPerConnection(),
                stats);
        gauge(
                "held-responses",
                "Responses ready but held until an earlier response of their connection is written.",
                s -> s.heldResponses(),
                stats);
        gauge(
                "held-requests",
                "Exclusive requests and SASL re-authentication handshakes held until their " + "connection drains.",
                s -> s.heldRequests(),
                stats);
        gauge(
                "throttled-connections",
                "Pipelined connections inside a client quota throttle window.",
                s -> s.throttledConnections(),
                stats);
        gauge("upgrade-total", "Connections upgraded to pipelined mode.", s -> s.upgrades(), stats);
        gauge(
                "upgrade-deferred-total",
                "Requests that would have upgraded their connection but were handled classically "
                        + "because the in-flight byte budget had no room for them (the connection then waits for budget in line).",
                s -> s.upgradesDeferred(),
                stats);
        gauge("downgrade-total", "Connections handed back to classic handling.", s -> s.downgrades(), stats);
        gauge(
                "drain-total",
                "Drains: an exclusive request or a SASL re-authentication handshake waited for the "
                        + "earlier responses of its connection, or a pipelined connection drained because kpipe.enable was set to "
                        + "false.",
                s -> s.drains(),
                stats);
        gauge("drain-time-ms-total", "Total time of the drains, in ms.", s -> s.drainTimeNanos() / 1e6, stats);
        gauge(
                "reauthentication-drain-total",
                "SASL re-authentications (KIP-368) that arrived on a pipelined connection"
                        + " with responses outstanding, or one written less than 100 ms before, and were deferred until those were"
                        + " written and 100 ms had passed (also counted in drain-total).",
                s -> s.reauthenticationDrains(),
                stats);
        gauge(
                "processor-wakeup-total",
                "Wake-ups kpipe asked of the network processors (beyond the broker's own, one per response) because"
                        + " a request's dispatch ended while no round of its processor was due (a connection the"
                        + " in-flight byte budget admits wakes its processor once more: budget-wait-total).",
                s -> s.processorWakeups(),
                stats);
        gauge(
                "pipelined-request-total",
                "Requests admitted on pipelined connections.",
                s -> s.pipelinedRequests(),
                stats);
        gauge(
                "deferred-dispatch-total",
                "Requests whose dispatch waited for an asynchronous write after KafkaApis.handle returned: a transactional"
                        + " produce or TXN_OFFSET_COMMIT the broker verified with the transaction coordinator first (KIP-890);"
                        + " their connection read its next request only once the append (or the offsets' write) had happened.",
                s -> s.deferredDispatches(),
                stats);
        gauge(
                "deferred-dispatch-fallback-total",
                "Deferred dispatches (deferred-dispatch-total) whose wait ended"
                        + " because their response was written before the broker's completion of the write was seen: rare races;"
                        + " a rising share means kpipe's completion hooks miss on this broker.",
                s -> s.deferredDispatchFallbacks(),
                stats);
        gauge(
                "throttle-window-total",
                "Client quota throttle windows on pipelined connections.",
                s -> s.throttleWindows(),
                stats);
        gauge(
                "throttle-time-ms-total",
                "Total time pipelined connections spent inside client quota throttle windows"
                        + " (per connection, from a window opening while none was open to the last one closing: overlapping windows"
                        + " count once), in ms.",
                s -> s.throttleTimeNanos() / 1e6,
                stats);
        gauge(
                "classification-fallback-total",
                "Requests handled as exclusive (classically) because classification failed.",
                s -> s.classificationFallbacks(),
                stats);
        budgetGauge(
                "inflight-bytes",
                "Request bytes reserved or admitted on pipelined connections now (the budget in use), in bytes.",
                b -> b.used(),
                budget);
        budgetGauge(
                "inflight-bytes-max",
                "The most request bytes reserved or admitted at once since start, in bytes.",
                b -> b.peak(),
                budget);
        budgetGauge(
                "inflight-bytes-limit", "The budget: kpipe.max.inflight.bytes, in bytes.", b -> b.capacity(), budget);
        budgetGauge(
                "budget-waiting-connections",
                "Pipelined connections waiting for the in-flight byte budget now.",
                b -> b.waiting(),
                budget);
        budgetGauge(
                "budget-wait-total",
                "Times a connection had to wait for the in-flight byte budget since start.",
                b -> b.waitsStarted(),
                budget);
        budgetGauge(
                "budget-wait-time-ms-total",
                "Total time connections waited for the in-flight byte budget, in ms.",
                b -> b.waitNanosTotal() / 1e6,
                budget);
        gauge(
                "budget-reservation-revoked-total",
                "Idle budget reservations given back because other connections waited.",
                s -> s.reservationsRevoked(),
                stats);
        budgetGauge(
                "budget-oversize-admitted-total",
                "Requests read that were at least as large as the whole budget (each admitted alone).",
                b -> b.oversizeAdmitted(),
                budget);
        gauge(
                "deferred-close-total",
                "Pipelined connections that ended with requests kpipe had read ahead still unanswered, closed once every"
                        + " earlier response was written, as stock Kafka would: the broker refused a request (unparseable,"
                        + " unknown API, unsupported version, an expired session), or the client's input ended (half-close,"
                        + " a frame refused for its size, a failed read).",
                s -> s.deferredCloses(),
                stats);
        gauge(
                "orphaned-receive-total",
                "Requests read on a pipelined listener in the same poll in which the client"
                        + " reset its connection, dropped unanswered before the broker processed them (stock Kafka cannot read while"
                        + " writing and never meets them).",
                s -> hooks.orphanedReceives(),
                stats);
        // One counter per wait reason, derived from the enum: a reason added there gets its metric here.
        for (WaitReason reason : WaitReason.values()) {
            if (reason.counted()) {
                gauge(reason.metricName(), reason.metricDescription(), s -> s.waits(reason), stats);
            }
        }
        // Two per row of the table of pipelined APIs: a row added there gets its metrics here.
        for (PipelinedApi api : PipelinedApi.values()) {
            gauge(
                    pipelinedMetricName(api),
                    api.api().name() + " requests admitted on pipelined connections since start.",
                    s -> s.pipelinedRequests(api),
                    stats);
            gauge(
                    inflightMetricName(api),
                    "The most " + api.api().name() + " requests in flight at once on one connection since start.",
                    s -> s.maxInflightPerConnection(api),
                    stats);
        }
        gauge(
                "plugin-fault-total",
                "Throwables caught in kpipe code on this broker's threads (the broker's own path proceeded), plus those"
                        + " caught before a hook knew its broker (per JVM: on every broker of a JVM that runs several).",
                s -> s.pluginFaults() + hooks.faults() + Interceptor.unattributedHookFaults(),
                stats);
    }

    /**
     * @param api a row of the table of pipelined APIs
     * @return its counter of admitted requests, {@code pipelined-<api>-total}, e.g. {@code pipelined-offset-commit-total}
     */
    public static String pipelinedMetricName(PipelinedApi api) {
        return "pipelined-" + api.metricLabel() + "-total";
    }

    /**
     * @param api a row of the table of pipelined APIs
     * @return its gauge of the most in flight on one connection, {@code inflight-<api>-per-connection-max}
     */
    public static String inflightMetricName(PipelinedApi api) {
        return "inflight-" + api.metricLabel() + "-per-connection-max";
    }

    private void gauge(String name, String description, ToDoubleFunction<PipelineStats> f, PipelineStats stats) {
        metrics.addMetric(metrics.metricName(name, GROUP, description, tags), (Gauge<Double>)
                (config, now) -> f.applyAsDouble(stats));
    }

    private void budgetGauge(String name, String description, ToDoubleFunction<ByteBudget> f, ByteBudget budget) {
        metrics.addMetric(metrics.metricName(name, GROUP, description, tags), (Gauge<Double>)
                (config, now) -> f.applyAsDouble(budget));
    }

    /** @return the registry, for tests and for other metric reporters */
    public Metrics registry() {
        return metrics;
    }

    @Override
    public void close() {
        metrics.close();
    }
}
