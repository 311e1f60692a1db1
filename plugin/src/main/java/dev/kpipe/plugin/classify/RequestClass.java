// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

/** How a request is handled on a connection, decided on the network thread before it is queued. */
public enum RequestClass {
    /**
     * May be dispatched while earlier requests of the connection are still completing; upgrades a
     * classic connection to pipelined mode. Default: non-transactional PRODUCE to policy topics.
     */
    PIPELINED,
    /**
     * Cheap read-only requests clients send on producing connections (METADATA, API_VERSIONS,
     * telemetry): pipelined, in order, on a pipelined connection; handled classically on a classic
     * one (an upgrade would buy nothing for them).
     */
    PIPELINED_NO_UPGRADE,
    /**
     * Classic semantics: on a pipelined connection every earlier response is written first (drain),
     * then the connection is handed back to Kafka (downgrade). Default for everything else.
     */
    EXCLUSIVE
}
