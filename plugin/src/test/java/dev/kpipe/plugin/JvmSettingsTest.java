// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The JVM-wide defaults: the agent's arguments and kpipe's system properties, under each broker's own keys. */
class JvmSettingsTest {

    @Test
    void agentArgumentsAreCommaSeparatedPairsInOrder() {
        Map<String, String> args = JvmSettings.parse(
                " kpipe.enable = true ,kpipe.max.inflight.requests.per.connection=8,,kpipe.topics.include=a|b");
        assertEquals(
                List.of("kpipe.enable", "kpipe.max.inflight.requests.per.connection", "kpipe.topics.include"),
                List.copyOf(args.keySet()));
        assertEquals("true", args.get("kpipe.enable"));
        assertEquals("a|b", args.get("kpipe.topics.include"));
        assertEquals(Map.of(), JvmSettings.parse(null));
        assertEquals(Map.of(), JvmSettings.parse("  "));
    }

    @Test
    void anArgumentThatIsNotKeyValueIsNamed() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> JvmSettings.parse("kpipe.enable=true,verbose"));
        assertTrue(e.getMessage().contains("'verbose'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> JvmSettings.parse("=true"));
    }

    @Test
    void systemPropertiesGiveOnlyKpipesOwnKeysAndTheAgentsArgumentsWin() {
        Properties system = new Properties();
        system.setProperty("kpipe.enable", "true");
        system.setProperty("kpipe.max.inflight.requests.per.connection", "3");
        system.setProperty("kpipe.spi.contract.check.class", "dev.kpipe.spi.testkit.ContractCheck"); // a test switch
        system.setProperty("java.version", "17");
        Map<String, String> defaults =
                JvmSettings.defaults(system, Map.of("kpipe.max.inflight.requests.per.connection", "9"));
        assertEquals(Map.of("kpipe.enable", "true", "kpipe.max.inflight.requests.per.connection", "9"), defaults);
    }

    @Test
    void aBrokersOwnKeysWinOverTheJvmsDefaults() {
        Map<String, Object> merged = JvmSettings.withDefaults(
                Map.of("kpipe.enable", "false", "node.id", "2"),
                Map.of("kpipe.enable", "true", "kpipe.max.inflight.requests.per.connection", "4"));
        assertEquals("false", merged.get("kpipe.enable"));
        assertEquals("4", merged.get("kpipe.max.inflight.requests.per.connection"));
        assertEquals("2", merged.get("node.id"));
        assertFalse(new KpipeConfig(merged).enabled());
        assertEquals(4, new KpipeConfig(merged).maxInflightRequestsPerConnection());
    }

    @Test
    void onlyKpipeEnableTrueGivesEveryBrokerAKpipe() {
        assertTrue(JvmSettings.everyBroker(Map.of("kpipe.enable", "true")));
        assertTrue(JvmSettings.everyBroker(Map.of("kpipe.enable", " TRUE ")));
        assertFalse(JvmSettings.everyBroker(Map.of("kpipe.enable", "false")));
        assertFalse(JvmSettings.everyBroker(Map.of("kpipe.max.inflight.requests.per.connection", "4")));
    }
}
