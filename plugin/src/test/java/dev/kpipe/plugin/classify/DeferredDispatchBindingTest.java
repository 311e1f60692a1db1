// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.plugin.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.interceptor.Interceptor;
import dev.kpipe.interceptor.UnsupportedBrokerException;
import java.util.EnumSet;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rows dispatched {@link DispatchPoint#AFTER_VERIFICATION} are the APIs each binding has deferred-dispatch hook
 * points for (its hook list): a row without them would keep its transactional requests exclusive on every broker, and
 * hook points without a row would be installed for nothing.
 */
class DeferredDispatchBindingTest {
    @ParameterizedTest
    @ValueSource(strings = {"3.8.1", "3.9.0", "4.0.0", "4.1.0", "4.4.0"})
    void afterVerificationRowsAreTheBindingsDeferredApis(String version) throws UnsupportedBrokerException {
        Set<ApiKeys> rows = EnumSet.noneOf(ApiKeys.class);
        for (PipelinedApi row : PipelinedApi.values()) {
            if (row.dispatchPoint() == DispatchPoint.AFTER_VERIFICATION) {
                rows.add(row.api());
            }
        }
        assertEquals(
                rows,
                Interceptor.bindingFor(version).deferredDispatchHookPoints().keySet(),
                "Kafka " + version);
    }
}
