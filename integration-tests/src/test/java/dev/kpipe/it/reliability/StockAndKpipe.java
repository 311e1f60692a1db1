// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.reliability;

import dev.kpipe.it.harness.Cluster;
import dev.kpipe.it.harness.ClusterSpec;
import dev.kpipe.it.harness.KafkaNode;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * The two clusters of a differential test: a stock one (the same Kafka distribution, plugin not installed) and a kpipe
 * one of the same shape, started side by side; and one client's run against both at the same time. Closing stops both.
 *
 * @param stock the cluster without kpipe
 * @param kpipe the cluster with kpipe
 */
public record StockAndKpipe(Cluster stock, Cluster kpipe) implements AutoCloseable {

    /** One client's run against node 1 of a cluster. */
    @FunctionalInterface
    public interface Client<T> {
        /** @throws Exception what fails the run */
        T run(KafkaNode node) throws Exception;
    }

    /**
     * Starts both clusters at once on two threads of {@code pool} (a failure of either closes the other).
     *
     * @param spec the clusters' shape, from a cluster name ({@code <name>-stock}, {@code <name>-kpipe})
     * @throws Exception what starting either throws
     */
    public static StockAndKpipe start(ExecutorService pool, String name, Function<String, ClusterSpec.Builder> spec)
            throws Exception {
        Future<Cluster> s = pool.submit(() ->
                Cluster.start(spec.apply(name + "-stock").installPlugin(false).build()));
        Future<Cluster> k =
                pool.submit(() -> Cluster.start(spec.apply(name + "-kpipe").build()));
        Cluster stock = null;
        try {
            stock = s.get();
            return new StockAndKpipe(stock, k.get());
        } catch (Exception | Error e) {
            if (stock != null) {
                stock.close();
            }
            try {
                k.get().close();
            } catch (Exception ignored) {
                // it failed to start: nothing to close
            }
            throw e;
        }
    }

    /**
     * Runs the client against node 1 of the stock and of the kpipe cluster at the same time, on {@code pool}.
     *
     * @return the stock run's result, then the kpipe run's
     * @throws Exception what either run throws
     */
    public <T> List<T> onBoth(ExecutorService pool, Client<T> client) throws Exception {
        Future<T> s = pool.submit(() -> client.run(stock.node(1)));
        Future<T> k = pool.submit(() -> client.run(kpipe.node(1)));
        return List.of(s.get(), k.get());
    }

    @Override
    public void close() {
        kpipe.close();
        stock.close();
    }
}
