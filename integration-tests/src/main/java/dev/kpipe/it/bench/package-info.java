/**
 * The kpipe benchmark and demo ({@link dev.kpipe.it.bench.BenchMain}): stock Kafka vs kpipe on real brokers started
 * by the {@link dev.kpipe.it.harness harness}, with alternating rounds, a table on stdout and JSON under {@code
 * integration-tests/target/bench/}.
 */
package dev.kpipe.it.bench;
