/**
 * Real-broker test harness: lays out KRaft clusters of stock Kafka JVMs (optionally with the kpipe jar in
 * {@code libs/}), runs them as child processes on 127.0.0.1, and exposes them to JUnit 5 tests ({@link
 * dev.kpipe.it.harness.KafkaCluster}) and to the command line ({@link dev.kpipe.it.harness.ClusterMain}). Each
 * cluster runs one laid-out Kafka distribution: the default ({@code kpipe.it.kafka.home}) or, per {@link
 * dev.kpipe.it.harness.ClusterSpec}, another version or folder ({@code integration-tests/target/kafka-<version>}).
 */
package dev.kpipe.it.harness;
