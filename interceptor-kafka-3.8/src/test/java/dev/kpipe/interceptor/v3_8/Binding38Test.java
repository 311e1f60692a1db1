// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v3_8;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.testkit.BindingContractTest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 3.8-3.9 binding against the Kafka 3.8.1 jars this module compiles and tests with: the contract, and its line's own. */
class Binding38Test extends BindingContractTest {

    @Override
    protected KafkaBinding binding() {
        return new Binding38();
    }

    @Override
    protected List<String> versions() {
        return List.of("3.8.0", "3.8.1", "3.9.0", "3.9.1");
    }

    @Override
    protected String versionLine() {
        return "3.8-3.9";
    }

    @Override
    protected String transactionManagerClass() {
        return "kafka.server.AddPartitionsToTxnManager";
    }

    @Override
    protected String requestClass() {
        return "kafka.network.RequestChannel$Request";
    }

    /** A binding for 4.x ({@code org.apache.kafka.server.common.RequestLocal}) on a 3.8 broker would be refused. */
    @Test
    void the4xRequestLocalIsMissingInKafka38() {
        assertEquals(
                List.of("kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, "
                        + "org.apache.kafka.server.common.RequestLocal)"),
                HookPoint.missing(
                        getClass().getClassLoader(),
                        List.of(HookPoint.method(
                                "kafka.server.KafkaApis",
                                "handle",
                                RequestModel38.REQUEST,
                                "org.apache.kafka.server.common.RequestLocal"))));
    }
}
