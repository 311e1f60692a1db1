/**
 * The version-independent half of every binding: the hook list ({@link dev.kpipe.interceptor.core.KafkaBinding}, one
 * list of {@link dev.kpipe.interceptor.core.AdvisedMethod}s used both to check and to install), the advice on
 * {@code kafka.network.Processor}, {@code kafka.network.RequestChannel}, {@code kafka.server.KafkaApis} and
 * kafka-clients' {@code KafkaChannel} (whose hooked members are the same in Kafka 3.8 to 4.4 apart from the request,
 * response and {@code RequestLocal} types), the static entry points it calls
 * ({@link dev.kpipe.interceptor.core.Hooks}), the {@link dev.kpipe.spi.NetworkProcessor} over a processor, and the
 * broker gauges. The version-specific half (the request and response classes behind
 * {@link dev.kpipe.interceptor.core.RequestModel}, the metadata cache's topic-name lookup and the produce purgatory)
 * is each binding's. Advice classes are tiny: each forwards to {@code Hooks}, which never lets a throwable reach a
 * broker thread.
 */
package dev.kpipe.interceptor.core;
