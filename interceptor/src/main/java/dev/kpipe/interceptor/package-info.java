/**
 * Installs the kpipe SPI ({@link dev.kpipe.spi}) into a running stock Kafka broker: verifies the
 * hook points of the running Kafka version, then applies small Byte Buddy advice to the broker's
 * network classes ({@code kafka.network.Processor}, {@code kafka.network.RequestChannel},
 * {@code kafka.server.KafkaApis}). The only module that knows broker internals; one binding
 * package per Kafka version line ({@code v4_4}).
 */
package dev.kpipe.interceptor;
