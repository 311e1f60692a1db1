// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.ClusterSpec;

/** Which broker a round runs against: the same Kafka distribution without or with kpipe. Immutable. */
enum Variant {
    /** Stock Kafka: kpipe not installed (default), or installed with {@code kpipe.enable=false}. */
    STOCK("stock"),
    /** kpipe installed and enabled ({@code metric.reporters=dev.kpipe.plugin.KpipePlugin}, {@code kpipe.enable=true}). */
    KPIPE("kpipe");

    private final String label;

    Variant(String label) {
        this.label = label;
    }

    /** @return "stock" or "kpipe" */
    String label() {
        return label;
    }

    /**
     * @param b the cluster spec to configure
     * @param stockInstallsPlugin for {@link #STOCK}: install the jar with {@code kpipe.enable=false} instead of leaving
     *     it out
     * @return {@code b}
     */
    ClusterSpec.Builder apply(ClusterSpec.Builder b, boolean stockInstallsPlugin) {
        if (this == KPIPE) {
            return b.installPlugin(true).kpipe(true);
        }
        return stockInstallsPlugin ? b.installPlugin(true).kpipe(false) : b.installPlugin(false);
    }
}
