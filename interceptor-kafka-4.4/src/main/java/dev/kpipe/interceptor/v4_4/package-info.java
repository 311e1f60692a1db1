/**
 * The binding for Kafka 4.4.x: request and response types are {@code org.apache.kafka.network.Request}
 * and {@code org.apache.kafka.network.Response} (kafka-server); everything else (the hooked
 * {@code kafka.network.Processor}, {@code RequestChannel} and {@code KafkaApis} members, the advice) is shared with
 * the other version lines in {@link dev.kpipe.interceptor.core}.
 */
package dev.kpipe.interceptor.v4_4;
