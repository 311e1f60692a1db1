/**
 * kpipe's own extension points, for a storage layer or an operator's policy: {@link
 * dev.kpipe.extension.ClassificationPolicy} (which topics' writes may be pipelined) and {@link
 * dev.kpipe.extension.StoragePressure} (back pressure from the storage side, per topic, with a wake-up when it
 * clears). They are kpipe's, not the broker's: the broker-facing SPI a broker would offer is {@code dev.kpipe.spi}.
 * Both are configured by class name in {@code server.properties} and run on the broker's network threads: they must be
 * cheap and must not block. A plugin author's guide: kpipe's {@code docs/plugin-authors.md}.
 */
package dev.kpipe.extension;
