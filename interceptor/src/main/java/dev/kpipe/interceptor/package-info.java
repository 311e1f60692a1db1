/**
 * Installs the kpipe SPI ({@link dev.kpipe.spi}) into a running stock Kafka broker: verifies the
 * hook points of the running Kafka version, then applies small Byte Buddy advice to the broker's
 * network classes ({@code kafka.network.Processor}, {@code kafka.network.RequestChannel},
 * {@code kafka.server.KafkaApis}). This module is the core, compiled against the oldest supported line (Kafka
 * 3.8.1): the shared hooks are in {@code core}; each Kafka version line's binding is a sibling module compiled against
 * the oldest line it serves ({@code interceptor-kafka-3.8}: {@code v3_8}, 3.8–3.9; {@code interceptor-kafka-4.0}:
 * {@code v4_0}; {@code interceptor-kafka-4.1}: {@code v4_1}, 4.1–4.3; {@code interceptor-kafka-4.4}: {@code v4_4}).
 * Only these modules know broker internals.
 */
package dev.kpipe.interceptor;
