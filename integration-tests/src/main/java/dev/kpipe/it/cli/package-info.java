/**
 * Command-line parsing shared by the benchmark ({@link dev.kpipe.it.bench}) and the soak ({@link dev.kpipe.it.soak}).
 */
package dev.kpipe.it.cli;
