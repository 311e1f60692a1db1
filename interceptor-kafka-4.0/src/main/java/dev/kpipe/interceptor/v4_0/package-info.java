/**
 * The binding for Kafka 4.0.x ({@link dev.kpipe.interceptor.v4_0.Binding40}): the Scala
 * {@code kafka.network.RequestChannel$Request}/{@code $Response} (the shared
 * {@link dev.kpipe.interceptor.v3_8.RequestModel38}) and Scala {@code kafka.server.MetadataCache}, with the Java
 * {@code org.apache.kafka.server.common.RequestLocal} and {@code DelayedOperationPurgatory}. The hooked members of
 * {@code kafka.network.Processor}, {@code RequestChannel} and {@code KafkaApis} are shared
 * ({@link dev.kpipe.interceptor.core}).
 */
package dev.kpipe.interceptor.v4_0;
