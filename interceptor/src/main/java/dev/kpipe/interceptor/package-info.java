/**
 * Installs the kpipe SPI ({@link dev.kpipe.spi}) into a running stock Kafka broker: verifies the
 * hook points of the running Kafka version, then applies small Byte Buddy advice to the broker's
 * network classes ({@code kafka.network.Processor}, {@code kafka.network.RequestChannel},
 * {@code kafka.server.KafkaApis}). The only module (with {@code interceptor-kafka-4.2}) that knows broker internals:
 * the shared hooks are in {@code core}, and there is one binding package per Kafka version line with its own request
 * and response classes ({@code v4_4} here; {@code v4_2}, for 4.2.x and 4.3.x, in {@code interceptor-kafka-4.2},
 * compiled against Kafka 4.2).
 */
package dev.kpipe.interceptor;
