// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.plugin.pipeline.PipelineCoordinator;

/**
 * For the benchmarks: the connection dump exactly as its JMX attribute builds it ({@code KpipeConnections.dump}),
 * without the MBean server. In the plugin's package because the dump's classes are package-private.
 */
public final class DumpProbe {

    private final KpipeConnections connections;

    /** @param coordinator the connections to list, at most {@code ConnectionDump.MAX_CONNECTIONS} of them */
    public DumpProbe(PipelineCoordinator<?, ?> coordinator) {
        this.connections = new KpipeConnections(coordinator, ConnectionDump.MAX_CONNECTIONS);
    }

    /** @return the dump's text now */
    public String dump() {
        return connections.dump();
    }
}
