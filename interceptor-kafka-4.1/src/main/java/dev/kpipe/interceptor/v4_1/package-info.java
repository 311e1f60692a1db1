/**
 * The binding for Kafka 4.1.x, 4.2.x and 4.3.x ({@link dev.kpipe.interceptor.v4_1.Binding41}): the Scala
 * {@code kafka.network.RequestChannel$Request}/{@code $Response} (the shared
 * {@link dev.kpipe.interceptor.v3_8.RequestModel38}), the Java {@code org.apache.kafka.metadata.MetadataCache} and
 * {@code org.apache.kafka.server.purgatory.DelayedOperationPurgatory}. The hooked {@code kafka.network.Processor},
 * {@code RequestChannel} and {@code KafkaApis} members are shared ({@link dev.kpipe.interceptor.core}).
 */
package dev.kpipe.interceptor.v4_1;
