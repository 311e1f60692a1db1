// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.plugin.AgentInstall.JvmOptions;
import dev.kpipe.plugin.AgentInstall.Verdict;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What self-attach meets, by Java release and JVM options (JEP 451), as {@link AgentInstall#verdict} decides it. The
 * rows were checked against real brokers on JDK 17.0.15 and 25.0.3 (see {@code AgentLoadingIT}).
 */
class AgentInstallTest {

    @ParameterizedTest(name = "Java {0}, DisableAttachMechanism={1}, EnableDynamicAgentLoading={2} (default: {3})")
    @CsvSource({
        // Java 17 (and 17 updates that know EnableDynamicAgentLoading, default true): silent
        "17, false, true,  true,  SILENT",
        "20, false, true,  true,  SILENT",
        // JEP 451 from Java 21: the option left at its default warns; set to true on the command line it does not
        "21, false, true,  true,  WARNS",
        "25, false, true,  true,  WARNS",
        "25, false, true,  false, SILENT",
        "17, false, true,  false, SILENT",
        // -XX:-EnableDynamicAgentLoading refuses (Java 21+, and the Java 17 updates that have the option)
        "25, false, false, false, LOADING_DISABLED",
        "17, false, false, false, LOADING_DISABLED",
        // -XX:+DisableAttachMechanism refuses whatever else is set
        "17, true,  true,  true,  ATTACH_DISABLED",
        "25, true,  true,  true,  ATTACH_DISABLED",
        "25, true,  false, false, ATTACH_DISABLED",
    })
    void verdictFollowsJep451(
            int java, boolean attachDisabled, boolean loadingEnabled, boolean loadingDefault, Verdict expected) {
        assertEquals(
                expected, AgentInstall.verdict(java, new JvmOptions(attachDisabled, loadingEnabled, loadingDefault)));
    }
}
