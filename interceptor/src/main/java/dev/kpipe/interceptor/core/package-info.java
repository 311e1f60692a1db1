/**
 * The version-independent half of every binding: the advice on {@code kafka.network.Processor},
 * {@code kafka.network.RequestChannel}, {@code kafka.server.KafkaApis} and kafka-clients' {@code KafkaChannel} (whose
 * hooked members are the same in Kafka 4.2 to 4.4), the static entry points it calls ({@link dev.kpipe.interceptor.core.Hooks}), the
 * {@link dev.kpipe.spi.NetworkProcessor} over a processor, and the broker gauges. The version-specific half, the
 * request and response classes, sits behind {@link dev.kpipe.interceptor.core.RequestModel}. Advice classes are
 * tiny: each forwards to {@code Hooks}, which never lets a throwable reach a broker thread.
 */
package dev.kpipe.interceptor.core;
