/**
 * The minimal network-layer SPI a Kafka broker would need to let a plugin pipeline requests on a
 * connection, written as a KIP would propose it.
 *
 * <p>Stock Kafka's {@code kafka.network.Processor} mutes a connection after reading one request and
 * unmutes it only after writing that request's response. This SPI reports the events of that cycle
 * to a {@link dev.kpipe.spi.NetworkEventListener} and offers the actions a plugin needs to take the
 * mute decision itself for some connections ({@link dev.kpipe.spi.NetworkProcessor}). Signatures
 * use kafka-clients types only; the broker's own request and response objects are passed as
 * opaque handles, compared by identity and never inspected by the plugin except through
 * {@link dev.kpipe.spi.NetworkProcessor}.
 *
 * <p>Threads: "network thread" is the processor thread that owns a connection's selector
 * ({@code data-plane-kafka-network-thread-<node>-<listener>-<n>}); "handler thread" is a request
 * handler ({@code data-plane-kafka-request-handler-<n>}). A plugin must never block a network
 * thread.
 */
package dev.kpipe.spi;
