// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kpipe.spi.BrokerCapabilities;
import dev.kpipe.spi.NetworkEventListener;
import dev.kpipe.spi.testkit.ContractCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The check named by {@code -Dkpipe.spi.contract.check.class}, loaded by name: the SPI test kit's, in the tests. */
class BrokerEventCheckTest {

    private final List<String> events = new ArrayList<>();
    private final NetworkEventListener<Object, Object> coordinator = new NetworkEventListener<>() {
        @Override
        public void onInstalled(BrokerCapabilities capabilities) {
            events.add("installed " + capabilities.kafkaVersion());
        }
    };

    @Test
    void withoutThePropertyTheEventsGoToTheCoordinatorDirectly() {
        assertSame(coordinator, BrokerEventCheck.wrap(coordinator, null));
        assertSame(coordinator, BrokerEventCheck.wrap(coordinator, " "));
    }

    @Test
    void theNamedCheckPassesEveryEventOnAndCountsViolations() {
        NetworkEventListener<Object, Object> wrapped =
                BrokerEventCheck.wrap(coordinator, " " + ContractCheck.class.getName() + " ");
        ContractCheck<?, ?> check = (ContractCheck<?, ?>) wrapped;
        wrapped.onProcessorRound(null); // before onInstalled: a violation, logged at ERROR
        wrapped.onInstalled(new BrokerCapabilities("4.4.0", Set.of()));
        assertEquals(List.of("installed 4.4.0"), events);
        assertEquals(1, check.violations());
    }

    @Test
    void aClassThatCannotBeUsedFailsTheInstallNamingTheProperty() {
        for (String name : List.of("dev.kpipe.NoSuchCheck", String.class.getName())) {
            IllegalStateException e =
                    assertThrows(IllegalStateException.class, () -> BrokerEventCheck.wrap(coordinator, name));
            assertTrue(e.getMessage().contains("-Dkpipe.spi.contract.check.class=" + name), e.getMessage());
        }
    }
}
