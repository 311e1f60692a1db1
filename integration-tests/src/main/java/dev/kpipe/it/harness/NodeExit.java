// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.it.harness;

/**
 * How a node's JVM ended when it was expected to fail (see {@link KafkaNode#startExpectingFailure}).
 *
 * @param exitCode the JVM's exit status (128+signal if it was killed by a signal)
 * @param log what the node's log4j2 file got during this start
 * @param console what the JVM wrote to stdout/stderr during this start
 */
public record NodeExit(int exitCode, String log, String console) {}
