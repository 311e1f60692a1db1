/**
 * The soak ({@link dev.kpipe.it.soak.SoakRun}): long mixed load (pipelined idempotent producers, an acks=0 producer,
 * consumer groups, admin calls, periodic client restarts) on a 2-node kpipe cluster, with leak checks (broker heap
 * after full GC, kpipe's gauges back to 0) and a read-back of every record. From the command line via {@code
 * BenchMain --scenario soak} ({@code ./demo.sh --scenario soak --duration-s 1200}); in CI as {@code SoakIT}.
 */
package dev.kpipe.it.soak;
