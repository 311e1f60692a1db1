// SPDX-License-Identifier: Apache-2.0
package dev.kpipe.interceptor.v4_0;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kpipe.interceptor.HookPoint;
import dev.kpipe.interceptor.core.KafkaBinding;
import dev.kpipe.interceptor.testkit.BindingContractTest;
import dev.kpipe.interceptor.v3_8.Binding38;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 4.0 binding against the Kafka 4.0.2 jars this module compiles and tests with: the contract, and its line's own. */
class Binding40Test extends BindingContractTest {

    @Override
    protected KafkaBinding binding() {
        return new Binding40();
    }

    @Override
    protected List<String> versions() {
        return List.of("4.0.0", "4.0.2");
    }

    @Override
    protected String versionLine() {
        return "4.0";
    }

    @Override
    protected String transactionManagerClass() {
        return "kafka.server.AddPartitionsToTxnManager";
    }

    @Override
    protected String requestClass() {
        return "kafka.network.RequestChannel$Request";
    }

    /** The 3.8 binding on a 4.0 broker would be refused before anything is installed. */
    @Test
    void the38BindingsHookPointsAreMissingInKafka40() {
        List<String> missing = HookPoint.missing(getClass().getClassLoader(), new Binding38().hookPoints());
        assertEquals(
                List.of(
                        "kafka.server.KafkaApis.handle(kafka.network.RequestChannel$Request, kafka.server.RequestLocal)",
                        "kafka.server.DelayedOperationPurgatory.numDelayed()"),
                missing);
    }

    /** ... and so would a binding that reads the Java metadata cache (4.1 on). */
    @Test
    void theJavaMetadataCacheIsMissingInKafka40() {
        assertEquals(
                List.of("org.apache.kafka.metadata.MetadataCache.getTopicName(org.apache.kafka.common.Uuid)"),
                HookPoint.missing(
                        getClass().getClassLoader(),
                        List.of(HookPoint.method(
                                "org.apache.kafka.metadata.MetadataCache",
                                "getTopicName",
                                "org.apache.kafka.common.Uuid"))));
    }
}
