// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_4;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.testkit.BindingContractTest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 4.4 binding against the Kafka 4.4.0 jars this module compiles and tests with: the contract, and its line's own. */
class Binding44Test extends BindingContractTest {

    @Override
    protected KafkaBinding binding() {
        return new Binding44();
    }

    @Override
    protected List<String> versions() {
        return List.of("4.4.0", "4.4.1", "4.4.0-SNAPSHOT");
    }

    @Override
    protected String versionLine() {
        return "4.4";
    }

    @Override
    protected String transactionManagerClass() {
        return "org.apache.kafka.server.transaction.AddPartitionsToTxnManager";
    }

    @Override
    protected String requestClass() {
        return "org.apache.kafka.network.Request";
    }

    /** The 3.8–4.3 request model's Scala request class is gone in 4.4. */
    @Test
    void theScalaRequestIsMissingInKafka44() {
        assertEquals(
                List.of("kafka.network.RequestChannel$Request"),
                HookPoint.missing(
                        getClass().getClassLoader(), List.of(HookPoint.type("kafka.network.RequestChannel$Request"))));
    }
}
