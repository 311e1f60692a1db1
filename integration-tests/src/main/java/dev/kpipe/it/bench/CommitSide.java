// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.bench;

import dev.kpipe.it.harness.ClusterSpec;

/**
 * The sides of the offset-commit scenarios S6 and S7 ({@link CommitScenario}): stock Kafka, kpipe, and kpipe with
 * {@code kpipe.offset.commits.pipelined=false} ("kpipe-excl": offset commits exclusive, as before issue #22). Each side
 * is a cluster of its own. Immutable.
 */
enum CommitSide {
    /** Stock Kafka: kpipe not installed (default), or installed with {@code kpipe.enable=false}. */
    STOCK("stock"),
    /** kpipe with its defaults: OFFSET_COMMIT and TXN_OFFSET_COMMIT pipelined. */
    KPIPE("kpipe"),
    /** kpipe with {@code kpipe.offset.commits.pipelined=false}: offset commits drain and hold the connection. */
    KPIPE_EXCL("kpipe-excl");

    /** kpipe's key that {@link #KPIPE_EXCL} sets to false (README's settings table; dynamic, default true). */
    static final String PIPELINED_KEY = "kpipe.offset.commits.pipelined";

    private final String label;

    CommitSide(String label) {
        this.label = label;
    }

    /** @return "stock", "kpipe" or "kpipe-excl": in the log, the table and the JSON */
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
        switch (this) {
            case STOCK -> Variant.STOCK.apply(b, stockInstallsPlugin);
            case KPIPE -> Variant.KPIPE.apply(b, stockInstallsPlugin);
            case KPIPE_EXCL -> Variant.KPIPE.apply(b, stockInstallsPlugin).brokerConfig(PIPELINED_KEY, "false");
        }
        return b;
    }
}
