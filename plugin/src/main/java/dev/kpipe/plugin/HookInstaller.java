// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import dev.kpipe.interceptor.HookCounters;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import dev.kpipe.plugin.pipeline.PipelineCoordinator;
import dev.kpipe.spi.NetworkEventListener;
import java.util.List;

/**
 * Installs the broker hooks that feed a coordinator ({@link BrokerHookInstaller}: the interceptor, in a broker; a
 * stand-in in unit tests). Thread: the caller of {@link KpipeRuntime#start} or {@link KpipeRuntime#reconfigure}.
 */
interface HookInstaller {
    /**
     * @param config the settings (listeners, ...)
     * @param coordinator the plugin the hooks report to
     * @param observers the listeners told every event beside the coordinator ({@code kpipe.spi.observer.classes})
     * @param counters where the broker's hooks count their faults and the receives they drop (this broker's only)
     * @return how they were installed, for the INFO line, e.g. {@code install mode attach, listeners=[PLAINTEXT]}
     * @throws UnsupportedBrokerException if they cannot be installed; the broker is unchanged then
     */
    String install(
            KpipeConfig config,
            PipelineCoordinator<Object, Object> coordinator,
            List<NetworkEventListener<Object, Object>> observers,
            HookCounters counters)
            throws UnsupportedBrokerException;
}
