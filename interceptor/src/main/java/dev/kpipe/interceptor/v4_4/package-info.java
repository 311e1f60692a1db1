/**
 * The binding for Kafka 4.4.x: request and response types are {@code org.apache.kafka.network.Request}
 * and {@code org.apache.kafka.network.Response} (kafka-server); the processor is
 * {@code kafka.network.Processor}. Advice classes are tiny: each forwards to {@link Hooks44}, which
 * translates to the SPI and never lets a throwable reach the broker thread.
 */
package dev.kpipe.interceptor.v4_4;
