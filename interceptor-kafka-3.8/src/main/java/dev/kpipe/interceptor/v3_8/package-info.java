/**
 * The binding for Kafka 3.8.x and 3.9.x, KRaft or ZooKeeper mode ({@link dev.kpipe.interceptor.v3_8.Binding38}), and
 * the Scala request model {@link dev.kpipe.interceptor.v3_8.RequestModel38} over
 * {@code kafka.network.RequestChannel$Request}/{@code $Response}, which the 4.0 and 4.1–4.3 bindings reuse (same
 * descriptors on 3.8 to 4.3). The hooked members of {@code kafka.network.Processor}, {@code RequestChannel} and
 * {@code KafkaApis} are shared ({@link dev.kpipe.interceptor.core}).
 */
package dev.kpipe.interceptor.v3_8;
