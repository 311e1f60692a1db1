/**
 * The binding for Kafka 4.2.x and 4.3.x, whose request and response types are the Scala classes
 * {@code kafka.network.RequestChannel$Request} and {@code $Response} (with {@code $SendResponse},
 * {@code $NoOpResponse}, {@code $CloseConnectionResponse}, {@code $StartThrottlingResponse},
 * {@code $EndThrottlingResponse}). The hooked {@code kafka.network.Processor}, {@code RequestChannel} and
 * {@code KafkaApis} members are the same as in 4.4 and shared ({@link dev.kpipe.interceptor.core}).
 */
package dev.kpipe.interceptor.v4_2;
